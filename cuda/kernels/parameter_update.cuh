// The kernels of the training step beyond the model (core/backend.hpp's adam_update,
// nag_update, add_sum_of_squares and scale_check_finite), over contiguous float32 tensors
// in the cuda/kernels/device.hpp dialect, with the CPU's formulas
// (core/cpu/parameter_update.cpp) and the update's scalars from core/optimizer_params.hpp.
#pragma once
#include "core/optimizer_params.hpp"
#include "cuda/kernels/block_reduce.cuh"

namespace attn::cuda_kernels {

__global__ void adam_update_kernel(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, AdamUpdate u,
                                   long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = grad[i];
    const float m = u.beta1 * exp_avg[i] + u.one_minus_beta1 * g;
    const float v = u.beta2 * exp_avg_sq[i] + u.one_minus_beta2 * (g * g);
    float theta = param[i];
    if (u.decays) theta += u.decay * theta;
    param[i] = theta + u.neg_step_size * (m / (sqrtf(v) + u.eps));
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
  }
}

__global__ void nag_update_kernel(float* param, const float* grad, float* buffer, NagUpdate u, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float theta = param[i];
    const float b = buffer[i], g = grad[i];
    if (u.decays) theta *= u.shrink;
    theta += u.buffer_to_param * b;
    param[i] = theta + u.grad_to_param * g;
    buffer[i] = u.buffer_decay * b + u.grad_to_buffer * g;
  }
}

// partial[block] = Σ x² over the elements block, block + gridDim.x, ... own (chunks of
// blockDim.x), in float64; with a grid fixed by n the sum does not depend on scheduling.
// Launch with blockDim.x a multiple of 32 and 32 doubles of shared memory.
__global__ void sum_of_squares_partials_kernel(const float* x, double* partial, long long n) {
  double sum = 0.0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
    sum += double(x[i]) * double(x[i]);
  sum = block_reduce(sum, shared_memory<double>(), SumOp(), 0.0);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// *total += Σ partial, in order (one thread).
__global__ void add_partials_kernel(const double* partial, int count, double* total) {
  double sum = 0.0;
  for (int b = 0; b < count; ++b) sum += partial[b];
  *total += sum;
}

// x *= scale; *found_nonfinite = 1 when a result is inf or NaN (found_nonfinite may be null).
// Every writer of the flag writes the same value, so the result does not depend on order.
__global__ void scale_check_finite_kernel(float* x, float scale, float* found_nonfinite, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i] * scale;
    x[i] = v;
    if (found_nonfinite && !(v - v == 0.0f)) *found_nonfinite = 1.0f;  // v − v is NaN for inf and NaN
  }
}

}  // namespace attn::cuda_kernels
