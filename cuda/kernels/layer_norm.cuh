// Layer normalisation over the last dim of a contiguous float32 [rows, cols] matrix, one
// block per row (core/backend.hpp's layer_norm), in the cuda/kernels/device.hpp dialect:
// out = (x − mean) · rstd · gamma + beta with rstd = 1/√(var + eps), the variance taken
// around the mean in a second pass (no cancellation); mean and rstd [rows] are saved for the
// backward. gamma and beta may be null (no affine). Launch the row kernels with blockDim.x a
// multiple of 32 and 32 floats of shared memory.
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

// dx of one row per block from dy and the saved mean and rstd, with g = dy · gamma (gamma may
// be null): dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)), x̂ = (x − mean) · rstd.
__global__ void layer_norm_backward_kernel(const float* dy, const float* x, const float* gamma, const float* mean,
                                           const float* rstd, float* dx, int cols) {
  const long long offset = (long long)blockIdx.x * cols;
  const float* in = x + offset;
  const float* grad_out = dy + offset;
  float* grad_in = dx + offset;
  float* scratch = shared_memory<float>();
  const float m = mean[blockIdx.x], rs = rstd[blockIdx.x];
  float sum_g = 0.0f, sum_g_xhat = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float g = grad_out[c] * (gamma ? gamma[c] : 1.0f);
    sum_g += g;
    sum_g_xhat += g * (in[c] - m) * rs;
  }
  const float mean_g = block_reduce(sum_g, scratch, SumOp(), 0.0f) / float(cols);
  const float mean_g_xhat = block_reduce(sum_g_xhat, scratch, SumOp(), 0.0f) / float(cols);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float g = grad_out[c] * (gamma ? gamma[c] : 1.0f);
    grad_in[c] = rs * (g - mean_g - (in[c] - m) * rs * mean_g_xhat);
  }
}

// dgamma[k · cols + c] = Σ_r dy[r, c] · x̂[r, c] and dbeta[k · cols + c] = Σ_r dy[r, c] over
// chunk k = blockIdx.y of the rows (chunk_rows of them from k · chunk_rows), one thread per
// column and chunk summing its rows in order (deterministic, no atomics); the chunks' sums are
// added in order afterwards (sum_slices_kernel). Either output may be null.
__global__ void layer_norm_affine_grads_kernel(const float* dy, const float* x, const float* mean, const float* rstd,
                                               float* dgamma, float* dbeta, int rows, int cols, int chunk_rows) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  const int first = int(blockIdx.y) * chunk_rows, end = first + chunk_rows < rows ? first + chunk_rows : rows;
  float sum_gamma = 0.0f, sum_beta = 0.0f;
  for (int r = first; r < end; ++r) {
    const long long i = (long long)r * cols + c;
    sum_gamma += dy[i] * (x[i] - mean[r]) * rstd[r];
    sum_beta += dy[i];
  }
  const long long out = (long long)blockIdx.y * cols + c;
  if (dgamma) dgamma[out] = sum_gamma;
  if (dbeta) dbeta[out] = sum_beta;
}

}  // namespace attn::cuda_kernels
