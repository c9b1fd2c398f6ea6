// Launches the in-order sum over value-row slices of cuda/kernels/sum_slices.cuh, the last
// step of the scans' backward (cuda/kernel_launch.hpp).
#include "cuda/kernels/sum_slices.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_sum_slices(const float* planes, float* out, int64_t n, int slices, void* stream) {
  if (n == 0) return;
  launch_kernel("sum_slices_kernel", cuda_kernels::sum_slices_kernel, grid_for(n), kThreadsPerBlock, 0, stream, planes,
                out, (long long)n, slices);
}

}  // namespace attn::cuda
