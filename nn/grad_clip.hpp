// Gradient normalisation and clipping by global norm, as fairseq's trainer does
// (docs/models.md §1.9; fairseq utils.clip_grad_norm_). A training step does, in order:
//
//   multiply_grads(params, 1 / Σ sample_size);       // per-token mean over the whole update
//   double norm = clip_grad_norm(params, clip_norm); // the norm logged as "gnorm"
//   if (!std::isfinite(norm)) → stop or skip the update (never step on NaN/inf gradients)
//
// clip_grad_norm returns the norm *before* clipping, ‖concat(all grads)‖₂ (accumulated in
// float64 here, in a fixed order, so it does not depend on the thread count), and when
// max_norm > 0 scales every gradient by min(1, max_norm / (norm + 1e-6)). max_norm = 0
// disables clipping but the norm is still computed. A non-finite norm leaves the gradients
// untouched. Parameters without a gradient are skipped. Gradients must be float32.
//
// Each gradient is touched by one kernel of its device (core/ops_update.hpp); the norm is
// summed on the device and read back once, as the one number the step has to log.
#pragma once
#include <vector>

#include "core/tensor.hpp"

namespace attn::nn {

// ‖concat(grad(p) for p in params)‖₂.
double grad_norm(const std::vector<Tensor>& params);
// Multiplies every gradient by `scale` in place.
void multiply_grads(const std::vector<Tensor>& params, double scale);
// Returns the pre-clipping global norm; clips when max_norm > 0 (see above).
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);
// Loss scaling: a loss multiplied by loss_scale before backward (so that small gradients
// survive a low-precision backward) has its gradients divided by loss_scale here. Returns
// false when any unscaled gradient is inf or NaN (the scale was too large: skip the step and
// lower it); the check costs one read of one flag, whatever the number of gradients.
bool unscale_grads(const std::vector<Tensor>& params, double loss_scale);

}  // namespace attn::nn
