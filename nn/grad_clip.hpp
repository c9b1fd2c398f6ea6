// Gradient normalisation and clipping by global norm, as fairseq's trainer does
// (docs/models.md §1.9; fairseq multiply_grads and utils.clip_grad_norm_). fairseq multiplies
// every gradient in place by 1 / Σ sample_size (the per-token mean over the whole update),
// takes the norm, and multiplies again by min(1, max_norm / (norm + 1e-6)) when clipping. Here
// the gradients are not touched: a training step does
//
//   GradScale s = scaled_grad_norm(params, 1 / Σ sample_size, clip_norm);  // s.norm: "gnorm"
//   if (!std::isfinite(s.norm)) → stop or skip the update (never step on NaN/inf gradients)
//   optimizer.step(s.factor);  // every gradient read as grad·factor on its way into the update
//
// which saves a read and a write of every gradient. The norm is the one *before* clipping,
// ‖scale · concat(all grads)‖₂ (accumulated in float64, in a fixed order, so it does not depend
// on the thread count); the factor is scale · min(1, max_norm / (norm + 1e-6)) when
// max_norm > 0 and the norm is finite, and scale otherwise (max_norm = 0 disables clipping but
// the norm is still computed). Parameters without a gradient are skipped. Gradients must be
// float32. The norm is summed on the device and read back once, as the one number the step has
// to log.
#pragma once
#include <vector>

#include "core/tensor.hpp"

namespace attn::nn {

// ‖concat(grad(p) for p in params)‖₂.
double grad_norm(const std::vector<Tensor>& params);

// The norm of the scaled gradients and the factor the optimizer applies (see above).
struct GradScale {
  double norm;
  double factor;
};
GradScale scaled_grad_norm(const std::vector<Tensor>& params, double scale, double max_norm);
// Loss scaling: a loss multiplied by loss_scale before backward (so that small gradients
// survive a low-precision backward) has its gradients divided by loss_scale here. Returns
// false when any unscaled gradient is inf or NaN (the scale was too large: skip the step and
// lower it); the check costs one read of one flag, whatever the number of gradients.
bool unscale_grads(const std::vector<Tensor>& params, double loss_scale);

}  // namespace attn::nn
