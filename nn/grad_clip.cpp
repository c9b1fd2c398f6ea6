// Gradient normalisation and clipping (docs/models.md §1.9). See grad_clip.hpp.
#include "nn/grad_clip.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/autograd.hpp"

namespace attn::nn {
namespace {

// Chunks of a fixed size, summed in a fixed order: the result does not depend on threads.
constexpr int64_t kChunkElements = 1 << 15;

double chunk_sum_of_squares(const float* x, int64_t n) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(x[i]);
  return sum;
}

double sum_of_squares(const float* x, int64_t n) {
  const int64_t chunks = (n + kChunkElements - 1) / kChunkElements;
  if (chunks <= 1) return chunk_sum_of_squares(x, n);
  std::vector<double> partial(size_t(chunks), 0.0);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunkElements;
    partial[size_t(c)] = chunk_sum_of_squares(x + begin, std::min(kChunkElements, n - begin));
  }
  return std::accumulate(partial.begin(), partial.end(), 0.0);
}

// The gradient of p as a contiguous float32 tensor (undefined when p has none).
Tensor float_grad(const Tensor& p) {
  Tensor g = grad(p);
  if (!g.defined()) return g;
  ATTN_CHECK(g.dtype() == DType::Float32, "gradient clipping: gradient {} is {}, expected float32", g.shape().str(),
             dtype_name(g.dtype()));
  ATTN_CHECK(g.device().is_cpu(), "gradient clipping: gradient {} is on {}; only CPU is supported", g.shape().str(),
             g.device().str());
  return g.contiguous();
}

}  // namespace

double grad_norm(const std::vector<Tensor>& params) {
  double total = 0.0;
  for (const Tensor& p : params) {
    Tensor g = float_grad(p);
    if (g.defined()) total += sum_of_squares(g.data<float>(), g.numel());
  }
  return std::sqrt(total);
}

void multiply_grads(const std::vector<Tensor>& params, double scale) {
  const float factor = float(scale);
  for (const Tensor& p : params) {
    Tensor g = float_grad(p);
    if (!g.defined()) continue;
    if (!g.shares_storage(grad(p))) set_grad(p, g);  // it was not contiguous: keep the copy
    float* x = g.data<float>();
    const int64_t n = g.numel();
#pragma omp parallel for simd schedule(static) if (n >= kChunkElements)
    for (int64_t i = 0; i < n; ++i) x[i] *= factor;
  }
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  ATTN_CHECK(max_norm >= 0, "gradient clipping: --clip-norm must be >= 0, got {}", max_norm);
  const double norm = grad_norm(params);
  if (max_norm > 0 && std::isfinite(norm)) {
    const double clip_coef = max_norm / (norm + 1e-6);
    if (clip_coef < 1.0) multiply_grads(params, clip_coef);
  }
  return norm;
}

}  // namespace attn::nn
