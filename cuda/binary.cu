// Launches the binary kernels of cuda/kernels/binary.cuh (cuda/kernel_launch.hpp).
#include "cuda/kernels/binary.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_binary(BinaryOp op, const float* a, const float* b, void* out, const cuda_kernels::TwoOperandLayout& layout,
                   int64_t n, void* stream) {
  if (n == 0) return;
  const unsigned grid = grid_for(n);
  if (is_comparison(op))
    cuda_kernels::binary_kernel<bool><<<grid, kThreadsPerBlock, 0, as_stream(stream)>>>(
        op, a, b, static_cast<bool*>(out), layout, (long long)n);
  else
    cuda_kernels::binary_kernel<float><<<grid, kThreadsPerBlock, 0, as_stream(stream)>>>(
        op, a, b, static_cast<float*>(out), layout, (long long)n);
  check_launch("binary_kernel");
}

}  // namespace attn::cuda
