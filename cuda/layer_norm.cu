// Launches the layer-norm kernels of cuda/kernels/layer_norm.cuh (cuda/kernel_launch.hpp): one
// block per row, and for the affine gradients one thread per column and chunk of rows.
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
                                const float* rstd, float* dx, float* dgamma, float* dbeta, float* partial, int64_t rows,
                                int64_t cols, void* stream) {
  if (rows == 0 || cols == 0) return;
  launch_kernel("layer_norm_backward_kernel", cuda_kernels::layer_norm_backward_kernel, unsigned(rows),
                kThreadsPerBlock, kReductionScratchBytes, stream, dy, x, gamma, mean, rstd, dx, int(cols));
  if (dgamma == nullptr && dbeta == nullptr) return;
  const ColumnChunks chunks(rows, cols);
  float* partial_beta = partial + chunks.scratch_floats();
  launch_kernel("layer_norm_affine_grads_kernel", cuda_kernels::layer_norm_affine_grads_kernel, chunks.grid(),
                kThreadsPerBlock, 0, stream, dy, x, mean, rstd, chunks.sums(dgamma, partial),
                chunks.sums(dbeta, partial_beta), int(rows), int(cols), chunks.rows_per_chunk());
  chunks.add_up(partial, dgamma, stream);
  chunks.add_up(partial_beta, dbeta, stream);
}

}  // namespace attn::cuda
