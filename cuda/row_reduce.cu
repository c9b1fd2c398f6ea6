// Launches the reductions (cuda/kernel_launch.hpp): the last-dim sum of
// cuda/kernels/row_reduce.cuh, one block per row, and the general reduction, arg-reduction
// and running sums of cuda/kernels/reduce.cuh, one thread per output or line.
#include "cuda/kernels/reduce.cuh"
#include "cuda/kernels/row_reduce.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_row_sum(const float* x, float* out, int64_t rows, int64_t cols, void* stream) {
  if (rows == 0) return;
  launch_kernel("row_sum_kernel", cuda_kernels::row_sum_kernel, unsigned(rows), kThreadsPerBlock,
                kReductionScratchBytes, stream, x, out, int(cols));
}

void launch_reduce(ReduceOp op, const float* x, float* out, const cuda_kernels::ReduceLayout& layout, int64_t outputs,
                   void* stream) {
  if (outputs == 0) return;
  launch_kernel("reduce_kernel", cuda_kernels::reduce_kernel, grid_for(outputs), kThreadsPerBlock, 0, stream, op, x,
                out, layout, (long long)outputs);
}

void launch_arg_reduce(bool is_max, const float* x, float* values, int64_t* indices,
                       const cuda_kernels::ReduceLayout& layout, int64_t outputs, void* stream) {
  if (outputs == 0) return;
  launch_kernel("arg_reduce_kernel", cuda_kernels::arg_reduce_kernel, grid_for(outputs), kThreadsPerBlock, 0, stream,
                is_max, x, values, indices, layout, (long long)outputs);
}

void launch_cumsum(const void* x, void* out, bool element_is_float, int64_t outer, int64_t length, int64_t inner,
                   bool reverse, void* stream) {
  if (outer * length * inner == 0) return;
  const unsigned grid = grid_for(outer * inner);
  if (element_is_float)
    launch_kernel("cumsum_kernel", cuda_kernels::cumsum_kernel<float>, grid, kThreadsPerBlock, 0, stream,
                  static_cast<const float*>(x), static_cast<float*>(out), outer, length, inner, reverse);
  else
    launch_kernel("cumsum_kernel", cuda_kernels::cumsum_kernel<int64_t>, grid, kThreadsPerBlock, 0, stream,
                  static_cast<const int64_t*>(x), static_cast<int64_t*>(out), outer, length, inner, reverse);
}

}  // namespace attn::cuda
