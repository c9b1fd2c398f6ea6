// Launches the reductions (cuda/kernel_launch.hpp): the last-dim sum of
// cuda/kernels/row_reduce.cuh, one block per row, and the general reduction of
// cuda/kernels/reduce.cuh, one thread per output.
#include "cuda/kernels/reduce.cuh"
#include "cuda/kernels/row_reduce.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_row_sum(const float* x, float* out, int64_t rows, int64_t cols, void* stream) {
  if (rows == 0) return;
  cuda_kernels::row_sum_kernel<<<unsigned(rows), kThreadsPerBlock, kReductionScratchBytes, as_stream(stream)>>>(
      x, out, int(cols));
  check_launch("row_sum_kernel");
}

void launch_reduce(ReduceOp op, const float* x, float* out, const cuda_kernels::ReduceLayout& layout, int64_t outputs,
                   void* stream) {
  if (outputs == 0) return;
  cuda_kernels::reduce_kernel<<<grid_for(outputs), kThreadsPerBlock, 0, as_stream(stream)>>>(op, x, out, layout,
                                                                                           (long long)outputs);
  check_launch("reduce_kernel");
}

}  // namespace attn::cuda
