// Launches the operand pointers of a two-batch-dim product (cuda/kernels/gemm_pointers.cuh,
// cuda/kernel_launch.hpp).
#include "cuda/kernels/gemm_pointers.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_gemm_pointers(const cuda_kernels::BatchOperand& a, const cuda_kernels::BatchOperand& b,
                          const cuda_kernels::BatchOperand& c, int64_t inner, int64_t count, const float** a_out,
                          const float** b_out, float** c_out, void* stream) {
  if (count == 0) return;
  launch_kernel("gemm_pointers_kernel", cuda_kernels::gemm_pointers_kernel, grid_for(count), kThreadsPerBlock, 0,
                stream, a, b, c, (long long)inner, (long long)count, a_out, b_out, c_out);
}

}  // namespace attn::cuda
