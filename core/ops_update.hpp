// Raw in-place ops of the training step that are not part of the model: the optimizer
// updates, the gradient norm and gradient scaling (nn/adam.hpp, nn/nag.hpp,
// nn/grad_clip.hpp). Each validates its tensors and runs one kernel of the tensors' device
// (core/backend_kernels.def), so the step runs wherever the parameters live and reads
// nothing back to the host unless the caller asks for a value.
#pragma once
#include "core/optimizer_params.hpp"
#include "core/tensor.hpp"

namespace attn::ops {

// One Adam update of param from grad with the moments exp_avg and exp_avg_sq, in place;
// all four contiguous float32 of one shape on one device.
void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                  const AdamUpdate& update);
// One NAG update of param and its momentum buffer from grad, in place (as adam_update_).
void nag_update_(const Tensor& param, const Tensor& grad, const Tensor& buffer, const NagUpdate& update);
// total += Σ x², with total a 0-d float64 tensor and x contiguous float32 on its device;
// accumulated in float64 in a fixed order (the same at every thread count).
void add_sum_of_squares_(const Tensor& total, const Tensor& x);
// x ← x·scale in place (contiguous float32). When found_nonfinite (a 0-d float32 tensor on
// x's device) is given, it is set to 1 if any scaled element is inf or NaN and otherwise
// left as it was, so one flag can collect a whole set of gradients.
void scale_(const Tensor& x, double scale, const Tensor& found_nonfinite = {});

}  // namespace attn::ops
