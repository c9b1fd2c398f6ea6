// The tensors of one optimizer update, a parameter at a time: what the group kernels of the
// training step take (core/backend_kernels.def: adam_update, nag_update,
// moving_average), so that a whole
// model's update is a few kernel launches instead of one per parameter.
#pragma once
#include "core/optimizer_params.hpp"
#include "core/tensor.hpp"

namespace attn {

// One parameter's Adam update: all four tensors contiguous float32 of one shape.
struct AdamTensors {
  Tensor param, grad, exp_avg, exp_avg_sq;
  AdamUpdate update;
};

// One parameter's NAG update: all three tensors contiguous float32 of one shape.
struct NagTensors {
  Tensor param, grad, buffer;
  NagUpdate update;
};

// One moving average's step (nn/exponential_moving_average.hpp): average and value contiguous
// float32 of one shape.
struct AverageTensors {
  Tensor average, value;
};

}  // namespace attn
