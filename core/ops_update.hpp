// Raw in-place ops of the training step that are not part of the model: the optimizer
// updates, the gradient norm and gradient scaling (nn/adam.hpp, nn/nag.hpp,
// nn/grad_clip.hpp). Each takes a whole group of tensors, validates them and runs one kernel
// of their device (core/backend_kernels.def), so the step runs wherever the parameters live,
// in a few launches, and reads nothing back to the host unless the caller asks for a value.
#pragma once
#include <vector>

#include "core/parameter_groups.hpp"
#include "core/tensor.hpp"

namespace attn::ops {

// One Adam update of every parameter of the group, in place (core/parameter_groups.hpp);
// every tensor contiguous float32, each parameter's four of one shape, all on one device.
void adam_update_(const std::vector<AdamTensors>& group);
// One NAG update of every parameter of the group and its momentum buffer, in place (as
// adam_update_).
void nag_update_(const std::vector<NagTensors>& group);
// average ← decay·average + (1 − decay)·value for every pair of the group, in place, in
// float32 (every tensor contiguous float32, each pair of one shape, all on one device).
void moving_average_(const std::vector<AverageTensors>& group, double decay);
// total += Σ over xs of Σ x², with total a 0-d float64 tensor and every x contiguous float32
// on its device; accumulated in float64 in a fixed order (the same at every thread count).
void add_sum_of_squares_(const Tensor& total, const std::vector<Tensor>& xs);
// x ← x·scale in place for every x of xs (contiguous float32, one device). When
// found_nonfinite (a 0-d float32 tensor on that device) is given, it is set to 1 if any
// scaled element is inf or NaN and otherwise left as it was, so one flag can collect a whole
// set of gradients.
void scale_(const std::vector<Tensor>& xs, double scale, const Tensor& found_nonfinite = {});

}  // namespace attn::ops
