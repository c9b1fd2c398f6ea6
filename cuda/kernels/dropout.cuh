// Inverted dropout over contiguous float32 tensors (core/backend.hpp's dropout, dropout_add
// and dropout_backward), in the cuda/kernels/device.hpp dialect. Element i keeps its value
// when the 24 high bits of Philox word i of the stream (seed, first) reach `threshold`
// (float_keep_threshold(p), core/rng.hpp) — the CPU's test (core/cpu/dropout.cpp) on the same
// stream, so masks are bit-identical on both devices. Products use __fmul_rn so that nvcc never
// fuses them with the residual add: the sum is rounded as the CPU rounds it.
#pragma once
#include "core/rng.hpp"
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

// out = (residual +) keep ? x · scale : 0 and mask = keep; residual may be null.
__global__ void dropout_kernel(const float* x, const float* residual, float scale, unsigned threshold,
                               unsigned long long seed, unsigned long long first, float* out, bool* mask, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const bool keep = (philox_word(seed, first, (unsigned long long)i) >> 8) >= threshold;
    const float dropped = keep ? __fmul_rn(x[i], scale) : 0.0f;
    out[i] = residual ? residual[i] + dropped : dropped;
    mask[i] = keep;
  }
}

// dx = mask ? dy · scale : 0.
__global__ void dropout_backward_kernel(const float* dy, const bool* mask, float scale, float* dx, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = mask[i] ? __fmul_rn(dy[i], scale) : 0.0f;
}

}  // namespace attn::cuda_kernels
