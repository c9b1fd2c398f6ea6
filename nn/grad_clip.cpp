// Gradient normalisation and clipping (docs/models.md §1.9). See grad_clip.hpp.
#include "nn/grad_clip.hpp"

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

}  // namespace

double grad_norm(const std::vector<Tensor>& params) {
  Tensor total;  // 0-d float64 on the gradients' device, made with the first gradient
  for (const Tensor& p : params) {
    Tensor g = float_grad(p);
    if (!g.defined()) continue;
    if (!total.defined()) total = zeros(Shape{}, DType::Float64, g.device());
    ops::add_sum_of_squares_(total, g);
  }
  return total.defined() ? std::sqrt(total.item()) : 0.0;
}

void multiply_grads(const std::vector<Tensor>& params, double scale) {
  for (const Tensor& p : params) {
    Tensor g = float_grad(p);
    if (g.defined()) ops::scale_(g, scale);
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

bool unscale_grads(const std::vector<Tensor>& params, double loss_scale) {
  ATTN_CHECK(loss_scale > 0 && std::isfinite(loss_scale), "loss scaling: the scale must be positive and finite, got {}",
             loss_scale);
  Tensor found_nonfinite;  // 0-d float32 on the gradients' device, made with the first gradient
  for (const Tensor& p : params) {
    Tensor g = float_grad(p);
    if (!g.defined()) continue;
    if (!found_nonfinite.defined()) found_nonfinite = zeros(Shape{}, DType::Float32, g.device());
    ops::scale_(g, 1.0 / loss_scale, found_nonfinite);
  }
  return !found_nonfinite.defined() || found_nonfinite.item() == 0.0;
}

}  // namespace attn::nn
