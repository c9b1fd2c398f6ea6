// Launches the row reductions of cuda/kernels/row_reduce.cuh (cuda/kernel_launch.hpp): one
// block per row.
#include "cuda/kernels/row_reduce.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_row_sum(const float* x, float* out, int64_t rows, int64_t cols, void* stream) {
  if (rows == 0) return;
  cuda_kernels::row_sum_kernel<<<unsigned(rows), kThreadsPerBlock, kReductionScratchBytes, as_stream(stream)>>>(
      x, out, int(cols));
  check_launch("row_sum_kernel");
}

}  // namespace attn::cuda
