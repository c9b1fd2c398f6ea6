// Launches the layer-norm kernel of cuda/kernels/layer_norm.cuh (cuda/kernel_launch.hpp): one
// block per row.
#include "cuda/kernels/layer_norm.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_layer_norm(const float* x, const float* gamma, const float* beta, float eps, float* y, float* mean,
                       float* rstd, int64_t rows, int64_t cols, void* stream) {
  if (rows == 0) return;
  cuda_kernels::layer_norm_kernel<<<unsigned(rows), kThreadsPerBlock, kReductionScratchBytes, as_stream(stream)>>>(
      x, gamma, beta, eps, y, mean, rstd, int(cols));
  check_launch("layer_norm_kernel");
}

}  // namespace attn::cuda
