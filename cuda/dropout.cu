// Launches the dropout kernels of cuda/kernels/dropout.cuh (cuda/kernel_launch.hpp).
#include "cuda/kernels/dropout.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_dropout(const float* x, const float* residual, double p, uint64_t seed, uint64_t first, float* out,
                    bool* mask, int64_t n, void* stream) {
  if (n == 0) return;
  const auto scale = float(1.0 / (1.0 - p));
  launch_kernel("dropout_kernel", cuda_kernels::dropout_kernel, grid_for(n), kThreadsPerBlock, 0, stream, x, residual,
                scale, float_keep_threshold(p), seed, first, out, mask, (long long)n);
}

void launch_dropout_backward(const float* dy, const bool* mask, double scale, float* dx, int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("dropout_backward_kernel", cuda_kernels::dropout_backward_kernel, grid_for(n), kThreadsPerBlock, 0,
                stream, dy, mask, float(scale), dx, (long long)n);
}

}  // namespace attn::cuda
