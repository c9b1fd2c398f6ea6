// The kernels of the training step beyond the model (core/backend.hpp's adam_update,
// nag_update, moving_average, add_sum_of_squares and scale_check_finite), over groups of contiguous float32
// tensors (cuda/kernels/parameter_group.hpp: one CUDA block per kGroupBlockElements elements
// of any tensor of the group) in the cuda/kernels/device.hpp dialect, with the CPU's formulas
// (core/cpu/parameter_update.cpp) and the update's scalars from core/optimizer_params.hpp.
#pragma once
#include "core/optimizer_params.hpp"
#include "cuda/kernels/block_reduce.cuh"
#include "cuda/kernels/parameter_group.hpp"

namespace attn::cuda_kernels {

// The tensor of the group this block works on and its elements [begin, end).
struct GroupRange {
  int tensor;
  long long begin, end;
};

__device__ inline GroupRange group_range(const GroupBlocks& blocks) {
  const int block = int(blockIdx.x), t = blocks.tensor_of(block);
  const long long begin = (long long)(block - blocks.first_block[t]) * kGroupBlockElements;
  const long long end = begin + kGroupBlockElements < blocks.numel[t] ? begin + kGroupBlockElements : blocks.numel[t];
  return {t, begin, end};
}

__global__ void adam_update_kernel(AdamGroup group) {
  const GroupRange r = group_range(group.blocks);
  const AdamUpdate u = group.update[r.tensor];
  float* const param = group.param[r.tensor];
  const float* const grad = group.grad[r.tensor];
  float* const exp_avg = group.exp_avg[r.tensor];
  float* const exp_avg_sq = group.exp_avg_sq[r.tensor];
  for (long long i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) {
    const float g = grad[i] * u.grad_scale;
    const float m = u.beta1 * exp_avg[i] + u.one_minus_beta1 * g;
    const float v = u.beta2 * exp_avg_sq[i] + u.one_minus_beta2 * (g * g);
    float theta = param[i];
    if (u.decays) theta += u.decay * theta;
    param[i] = theta + u.neg_step_size * (m / (sqrtf(v) + u.eps));
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
  }
}

__global__ void nag_update_kernel(NagGroup group) {
  const GroupRange r = group_range(group.blocks);
  const NagUpdate u = group.update[r.tensor];
  float* const param = group.param[r.tensor];
  const float* const grad = group.grad[r.tensor];
  float* const buffer = group.buffer[r.tensor];
  for (long long i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) {
    float theta = param[i];
    const float b = buffer[i], g = grad[i] * u.grad_scale;
    if (u.decays) theta *= u.shrink;
    theta += u.buffer_to_param * b;
    param[i] = theta + u.grad_to_param * g;
    buffer[i] = u.buffer_decay * b + u.grad_to_buffer * g;
  }
}

// average ← keep·average + take·value (keep = d, take = 1 − d, rounded to float32).
__global__ void moving_average_kernel(AverageGroup group, float keep, float take) {
  const GroupRange r = group_range(group.blocks);
  float* const average = group.average[r.tensor];
  const float* const value = group.value[r.tensor];
  for (long long i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) average[i] = keep * average[i] + take * value[i];
}

// partial[block] = Σ x² over the block's elements, in float64 (a fixed decomposition, so the
// sum does not depend on scheduling). Launch with blockDim.x a multiple of 32 and 32 doubles
// of shared memory.
__global__ void sum_of_squares_partials_kernel(FloatGroup group, double* partial) {
  const GroupRange r = group_range(group.blocks);
  const float* const x = group.x[r.tensor];
  double sum = 0.0;
  for (long long i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) sum += double(x[i]) * double(x[i]);
  sum = block_reduce(sum, shared_memory<double>(), SumOp(), 0.0);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// *total += Σ partial[0 .. count), in a fixed order: each thread sums a strided share in
// order, then the block reduces. One block, blockDim.x a multiple of 32, 32 doubles of
// shared memory.
__global__ void add_partials_kernel(const double* partial, long long count, double* total) {
  double sum = 0.0;
  for (long long b = threadIdx.x; b < count; b += blockDim.x) sum += partial[b];
  sum = block_reduce(sum, shared_memory<double>(), SumOp(), 0.0);
  if (threadIdx.x == 0) *total += sum;
}

// x *= scale over the group; *found_nonfinite = 1 when a result is inf or NaN
// (found_nonfinite may be null). Every writer of the flag writes the same value, so the
// result does not depend on order.
__global__ void scale_check_finite_kernel(FloatGroup group, float scale, float* found_nonfinite) {
  const GroupRange r = group_range(group.blocks);
  float* const x = group.x[r.tensor];
  for (long long i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) {
    const float v = x[i] * scale;
    x[i] = v;
    if (found_nonfinite && !(v - v == 0.0f)) *found_nonfinite = 1.0f;  // v − v is NaN for inf and NaN
  }
}

}  // namespace attn::cuda_kernels
