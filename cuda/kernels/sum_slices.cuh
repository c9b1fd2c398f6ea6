// The last step of the recurrent scans' backward (cuda/kernels/value_row_scan.cuh): each slice
// of value rows left its sums over its own rows in a plane of its own, and this adds the
// planes in slice order — deterministic, where atomics would not be. cuda/kernels/device.hpp
// dialect; in a header of its own because nvcc defines a __global__ function once per launch
// file that includes it.
#pragma once
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

// out[i] = Σ_s partials[s · n + i] in slice order: the value-row slices' sums of a backward.
__global__ void sum_slices_kernel(const float* partials, float* out, long long n, int slices) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float sum = 0.0f;
    for (int slice = 0; slice < slices; ++slice) sum += partials[slice * n + i];
    out[i] = sum;
  }
}

}  // namespace attn::cuda_kernels
