// Gradient normalisation and clipping (docs/models.md §1.9). See grad_clip.hpp.
#include "nn/grad_clip.hpp"

#include <algorithm>
#include <cmath>

#include "autograd/autograd.hpp"
#include "core/ops_update.hpp"

namespace attn::nn {
namespace {

// The gradient of p as a contiguous float32 tensor (undefined when p has none); a copy made
// to get it contiguous replaces the gradient, so in-place scaling reaches it.
Tensor float_grad(const Tensor& p) {
  Tensor g = grad(p);
  if (!g.defined()) return g;
  ATTN_CHECK(g.dtype() == DType::Float32, "gradient clipping: gradient {} is {}, expected float32", g.shape().str(),
             dtype_name(g.dtype()));
  if (!g.is_contiguous()) {
    g = g.contiguous();
    set_grad(p, g);
  }
  return g;
}

// The contiguous float32 gradients of the parameters that have one.
std::vector<Tensor> float_grads(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (Tensor g = float_grad(p); g.defined()) grads.push_back(g);
  return grads;
}

}  // namespace

double grad_norm(const std::vector<Tensor>& params) {
  const std::vector<Tensor> grads = float_grads(params);
  if (grads.empty()) return 0.0;
  const Tensor total = zeros(Shape{}, DType::Float64, grads.front().device());
  ops::add_sum_of_squares_(total, grads);
  return std::sqrt(total.item());
}

GradScale scaled_grad_norm(const std::vector<Tensor>& params, double scale, double max_norm) {
  ATTN_CHECK(max_norm >= 0, "gradient clipping: --clip-norm must be >= 0, got {}", max_norm);
  ATTN_CHECK(scale > 0 && std::isfinite(scale), "gradient normalisation: the scale must be positive and finite, got {}",
             scale);
  const double norm = scale * grad_norm(params);
  const double clip_coef = max_norm > 0 && std::isfinite(norm) ? max_norm / (norm + 1e-6) : 1.0;
  return {norm, scale * std::min(1.0, clip_coef)};
}

bool unscale_grads(const std::vector<Tensor>& params, double loss_scale) {
  ATTN_CHECK(loss_scale > 0 && std::isfinite(loss_scale), "loss scaling: the scale must be positive and finite, got {}",
             loss_scale);
  const std::vector<Tensor> grads = float_grads(params);
  if (grads.empty()) return true;
  const Tensor found_nonfinite = zeros(Shape{}, DType::Float32, grads.front().device());
  ops::scale_(grads, 1.0 / loss_scale, found_nonfinite);
  return found_nonfinite.item() == 0.0;
}

}  // namespace attn::nn
