// CPU kernels of the training step (core/backend.hpp): the Adam and NAG updates, the sum of
// squares behind the gradient norm, and gradient scaling with a non-finite check.
//
// The updates work through cache-sized blocks with Eigen array maps (vectorized, sqrt
// included), spread over threads when there are many blocks; each element's arithmetic is
// the same float32 expression whatever the blocking, so results do not depend on threads.
// The sum of squares is accumulated in float64 per fixed chunk and the chunks are summed in
// order, again independent of the thread count.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/cpu/cpu_backend.hpp"

namespace attn::cpu {
namespace {

using FloatArray = Eigen::Map<Eigen::ArrayXf>;
using ConstFloatArray = Eigen::Map<const Eigen::ArrayXf>;

constexpr int64_t kBlockElements = 4096;
constexpr int64_t kParallelBlocks = 8;
constexpr int64_t kChunkElements = 1 << 15;

// Runs body(begin, size) over [0, n) in blocks of kBlockElements.
template <typename Body>
void for_each_block(int64_t n, Body&& body) {
  const int64_t blocks = (n + kBlockElements - 1) / kBlockElements;
#pragma omp parallel for schedule(static) if (blocks >= kParallelBlocks)
  for (int64_t b = 0; b < blocks; ++b) body(b * kBlockElements, std::min(kBlockElements, n - b * kBlockElements));
}

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

}  // namespace

void CpuBackend::adam_update(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                             const Tensor& exp_avg_sq, const AdamUpdate& u) {
  float* const theta_data = param.data<float>();
  float* const m_data = exp_avg.data<float>();
  float* const v_data = exp_avg_sq.data<float>();
  const float* const g_data = grad.data<float>();
  for_each_block(param.numel(), [&](int64_t begin, int64_t size) {
    FloatArray theta(theta_data + begin, size), m(m_data + begin, size), v(v_data + begin, size);
    ConstFloatArray g(g_data + begin, size);
    m = u.beta1 * m + u.one_minus_beta1 * g;
    v = u.beta2 * v + u.one_minus_beta2 * g.square();
    if (u.decays) theta += u.decay * theta;
    theta += u.neg_step_size * (m / (v.sqrt() + u.eps));
  });
}

void CpuBackend::nag_update(const Tensor& param, const Tensor& grad, const Tensor& buffer, const NagUpdate& u) {
  float* const theta_data = param.data<float>();
  float* const b_data = buffer.data<float>();
  const float* const g_data = grad.data<float>();
  for_each_block(param.numel(), [&](int64_t begin, int64_t size) {
    FloatArray theta(theta_data + begin, size), b(b_data + begin, size);
    ConstFloatArray g(g_data + begin, size);
    if (u.decays) theta *= u.shrink;
    theta += u.buffer_to_param * b;
    theta += u.grad_to_param * g;
    b = u.buffer_decay * b + u.grad_to_buffer * g;
  });
}

void CpuBackend::add_sum_of_squares(const Tensor& x, const Tensor& total) {
  *total.data<double>() += sum_of_squares(x.data<float>(), x.numel());
}

void CpuBackend::scale_check_finite(const Tensor& x, double scale, const Tensor& found_nonfinite) {
  const float factor = float(scale);
  float* const data = x.data<float>();
  const int64_t n = x.numel();
  if (!found_nonfinite.defined()) {
#pragma omp parallel for simd schedule(static) if (n >= kChunkElements)
    for (int64_t i = 0; i < n; ++i) data[i] *= factor;
    return;
  }
  bool nonfinite = false;
#pragma omp parallel for simd schedule(static) reduction(|| : nonfinite) if (n >= kChunkElements)
  for (int64_t i = 0; i < n; ++i) {
    data[i] *= factor;
    nonfinite = nonfinite || !std::isfinite(data[i]);
  }
  if (nonfinite) *found_nonfinite.data<float>() = 1.0f;
}

}  // namespace attn::cpu
