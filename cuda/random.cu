// Launches the random kernels of cuda/kernels/random.cuh (cuda/kernel_launch.hpp).
#include "cuda/kernels/random.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_uniform(float* out, double low, double high, uint64_t seed, uint64_t first, int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("uniform_kernel", cuda_kernels::uniform_kernel, grid_for(n), kThreadsPerBlock, 0, stream, out, low,
                high, seed, first, (long long)n);
}

void launch_normal(float* out, double mean, double stddev, uint64_t seed, uint64_t first, int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("normal_kernel", cuda_kernels::normal_kernel, grid_for((n + 1) / 2), kThreadsPerBlock, 0, stream, out,
                mean, stddev, seed, first, (long long)n);
}

}  // namespace attn::cuda
