// Launches the reductions (cuda/kernel_launch.hpp): the last-dim sum of
// cuda/kernels/row_reduce.cuh, one block per row, and the general reduction (split into
// chunks when it has few outputs, log-sum-exp apart), arg-reduction and running sums of
// cuda/kernels/reduce.cuh, one thread per output (and chunk) or line.
#include "cuda/kernels/reduce.cuh"
#include "cuda/kernels/row_reduce.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_row_sum(const float* x, float* out, int64_t rows, int64_t cols, void* stream) {
  if (rows == 0) return;
  launch_kernel("row_sum_kernel", cuda_kernels::row_sum_kernel, unsigned(rows), kThreadsPerBlock,
                kReductionScratchBytes, stream, x, out, int(cols));
}

int64_t reduce_chunks(ReduceOp op, const cuda_kernels::ReduceLayout& layout, int64_t outputs) {
  // Each output's reduced elements are a column of that many rows. Log-sum-exp's two passes
  // (around the maximum) stay whole.
  return op == ReduceOp::LogSumExp ? 1 : column_chunks(int64_t(layout.reduced_count), outputs);
}

void launch_reduce(ReduceOp op, const float* x, float* out, const cuda_kernels::ReduceLayout& layout, int64_t outputs,
                   double* partial, void* stream) {
  if (outputs == 0) return;
  const int64_t chunks = reduce_chunks(op, layout, outputs);
  if (chunks == 1) {
    launch_kernel("reduce_kernel", cuda_kernels::reduce_kernel, grid_for(outputs), kThreadsPerBlock, 0, stream, op, x,
                  out, layout, (long long)outputs);
    return;
  }
  const long long chunk_length = (layout.reduced_count + chunks - 1) / chunks;
  launch_kernel("reduce_partial_kernel", cuda_kernels::reduce_partial_kernel, dim3(grid_for(outputs), unsigned(chunks)),
                kThreadsPerBlock, 0, stream, op, x, partial, layout, (long long)outputs, chunk_length);
  launch_kernel("reduce_combine_kernel", cuda_kernels::reduce_combine_kernel, grid_for(outputs), kThreadsPerBlock, 0,
                stream, op, static_cast<const double*>(partial), out, (long long)outputs, (long long)chunks,
                layout.reduced_count);
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
