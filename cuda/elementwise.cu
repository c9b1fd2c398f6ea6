// Launches the element-wise kernels of cuda/kernels/elementwise.cuh (cuda/kernel_launch.hpp).
#include "cuda/kernels/elementwise.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_fill(float value, float* y, int64_t n, void* stream) {
  if (n == 0) return;
  cuda_kernels::fill_kernel<<<grid_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(value, y, (long long)n);
  check_launch("fill_kernel");
}

void launch_unary(UnaryOp op, UnaryParams params, const float* x, float* y, int64_t n, void* stream) {
  if (n == 0) return;
  cuda_kernels::unary_kernel<<<grid_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(
      op, float(params.a), float(params.b), x, y, (long long)n);
  check_launch("unary_kernel");
}

}  // namespace attn::cuda
