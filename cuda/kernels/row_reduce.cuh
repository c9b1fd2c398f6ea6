// Row reductions of a contiguous float32 [rows, cols] matrix, one block per row (the last-dim
// sum of core/backend.hpp's reduce), in the cuda/kernels/device.hpp dialect. Launch with
// blockDim.x a multiple of 32 and 32 floats of shared memory.
#pragma once
#include "cuda/kernels/block_reduce.cuh"

namespace attn::cuda_kernels {

// out[r] = Σ_c x[r, c], summed per thread in column order, then over the block.
__global__ void row_sum_kernel(const float* x, float* out, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += row[c];
  sum = block_reduce(sum, shared_memory<float>(), SumOp(), 0.0f);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

}  // namespace attn::cuda_kernels
