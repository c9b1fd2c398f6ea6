// Layer normalisation over the last dim of a contiguous float32 [rows, cols] matrix, one
// block per row (core/backend.hpp's layer_norm), in the cuda/kernels/device.hpp dialect:
// out = (x − mean) · rstd · gamma + beta with rstd = 1/√(var + eps), the variance taken
// around the mean in a second pass (no cancellation); mean and rstd [rows] are saved for the
// backward. gamma and beta may be null (no affine). Launch with blockDim.x a multiple of 32
// and 32 floats of shared memory.
#pragma once
#include "cuda/kernels/block_reduce.cuh"

namespace attn::cuda_kernels {

__global__ void layer_norm_kernel(const float* x, const float* gamma, const float* beta, float eps, float* y,
                                  float* mean_out, float* rstd_out, int cols) {
  const long long offset = (long long)blockIdx.x * cols;
  const float* in = x + offset;
  float* out = y + offset;
  float* scratch = shared_memory<float>();
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += in[c];
  const float mean = block_reduce(sum, scratch, SumOp(), 0.0f) / float(cols);
  float squares = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) squares += (in[c] - mean) * (in[c] - mean);
  const float rstd = 1.0f / sqrtf(block_reduce(squares, scratch, SumOp(), 0.0f) / float(cols) + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float normalized = (in[c] - mean) * rstd;
    out[c] = normalized * (gamma ? gamma[c] : 1.0f) + (beta ? beta[c] : 0.0f);
  }
  if (threadIdx.x == 0) {
    mean_out[blockIdx.x] = mean;
    rstd_out[blockIdx.x] = rstd;
  }
}

}  // namespace attn::cuda_kernels
