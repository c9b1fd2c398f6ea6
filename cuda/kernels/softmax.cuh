// Softmax and log-softmax over the last dim of a contiguous float32 [rows, cols] matrix, one
// block per row (core/backend.hpp's softmax), in the cuda/kernels/device.hpp dialect:
// y = exp(x − max) / Σ exp(x − max), or x − max − log Σ exp(x − max). Launch with blockDim.x
// a multiple of 32 and 32 floats of shared memory (both kernels).
#pragma once
#include "cuda/kernels/block_reduce.cuh"

namespace attn::cuda_kernels {

__global__ void softmax_kernel(const float* x, float* y, int cols, bool log) {
  const long long offset = (long long)blockIdx.x * cols;
  const float* in = x + offset;
  float* out = y + offset;
  float* scratch = shared_memory<float>();
  float max = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) max = fmaxf(max, in[c]);
  max = block_reduce(max, scratch, MaxOp(), -INFINITY);
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(in[c] - max);
  sum = block_reduce(sum, scratch, SumOp(), 0.0f);
  if (log) {
    const float log_sum = logf(sum);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = in[c] - max - log_sum;
  } else {
    const float inverse = 1.0f / sum;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - max) * inverse;
  }
}

// The backward from y = softmax(x) (or log-softmax) and g = dL/dy, one block per row:
//   softmax: dx = y · (g − Σ g·y)      log-softmax: dx = g − exp(y) · Σ g
__global__ void softmax_backward_kernel(const float* y, const float* dy, float* dx, int cols, bool log) {
  const long long offset = (long long)blockIdx.x * cols;
  const float* out = y + offset;
  const float* g = dy + offset;
  float* grad = dx + offset;
  float dot = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) dot += log ? g[c] : g[c] * out[c];
  dot = block_reduce(dot, shared_memory<float>(), SumOp(), 0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    grad[c] = log ? g[c] - expf(out[c]) * dot : out[c] * (g[c] - dot);
}

}  // namespace attn::cuda_kernels
