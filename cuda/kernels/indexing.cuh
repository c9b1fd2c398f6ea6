// Row gathers and scatters of float32 matrices by int64 indices (core/backend.hpp's
// index_select_rows and index_add_rows: an embedding's forward and backward), in the
// cuda/kernels/device.hpp dialect. The indices were validated on the host side (core/ops).
#pragma once
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

// out[i, d] = weight[indices[i], d] over out [rows, width].
__global__ void index_select_rows_kernel(const float* weight, const int64_t* indices, float* out, long long rows,
                                         int width) {
  const long long n = rows * width, stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = weight[indices[i / width] * width + i % width];
}

// grad_weight[indices[i], d] += src[i, d]: one thread per column d, adding the rows in index
// order, so repeated indices sum in the same order as on the CPU (deterministic, no atomics).
__global__ void index_add_rows_kernel(float* grad_weight, const int64_t* indices, const float* src, long long rows,
                                      int width) {
  const int d = blockIdx.x * blockDim.x + threadIdx.x;
  if (d >= width) return;
  for (long long i = 0; i < rows; ++i) grad_weight[indices[i] * width + d] += src[i * width + d];
}

}  // namespace attn::cuda_kernels
