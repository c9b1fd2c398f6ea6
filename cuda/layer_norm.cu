// Launches the layer-norm kernels of cuda/kernels/layer_norm.cuh (cuda/kernel_launch.hpp): one
// block per row, and for the affine gradients one thread per column.
#include "cuda/kernels/layer_norm.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_layer_norm(const float* x, const float* gamma, const float* beta, float eps, float* y, float* mean,
                       float* rstd, int64_t rows, int64_t cols, void* stream) {
  if (rows == 0) return;
  launch_kernel("layer_norm_kernel", cuda_kernels::layer_norm_kernel, unsigned(rows), kThreadsPerBlock,
                kReductionScratchBytes, stream, x, gamma, beta, eps, y, mean, rstd, int(cols));
}

void launch_layer_norm_backward(const float* dy, const float* x, const float* gamma, const float* mean,
                                const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t cols,
                                void* stream) {
  if (rows == 0) return;
  launch_kernel("layer_norm_backward_kernel", cuda_kernels::layer_norm_backward_kernel, unsigned(rows),
                kThreadsPerBlock, kReductionScratchBytes, stream, dy, x, gamma, mean, rstd, dx, int(cols));
  if (dgamma == nullptr && dbeta == nullptr) return;
  const unsigned column_blocks = unsigned((cols + kThreadsPerBlock - 1) / kThreadsPerBlock);
  launch_kernel("layer_norm_affine_grads_kernel", cuda_kernels::layer_norm_affine_grads_kernel, column_blocks,
                kThreadsPerBlock, 0, stream, dy, x, mean, rstd, dgamma, dbeta, int(rows), int(cols));
}

}  // namespace attn::cuda
