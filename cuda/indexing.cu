// Launches the indexing kernels of cuda/kernels/indexing.cuh (cuda/kernel_launch.hpp).
#include "cuda/kernels/indexing.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_index_select_rows(const float* weight, const int64_t* indices, float* out, int64_t rows, int64_t width,
                              void* stream) {
  if (rows * width == 0) return;
  launch_kernel("index_select_rows_kernel", cuda_kernels::index_select_rows_kernel, grid_for(rows * width),
                kThreadsPerBlock, 0, stream, weight, indices, out, (long long)rows, int(width));
}

void launch_index_add_rows(float* grad_weight, const int64_t* indices, const float* src, int64_t rows, int64_t width,
                           void* stream) {
  if (rows * width == 0) return;
  const unsigned column_blocks = unsigned((width + kThreadsPerBlock - 1) / kThreadsPerBlock);
  launch_kernel("index_add_rows_kernel", cuda_kernels::index_add_rows_kernel, column_blocks, kThreadsPerBlock, 0,
                stream, grad_weight, indices, src, (long long)rows, int(width));
}

void launch_gather_last(const float* x, const int64_t* index, float* out, int64_t rows, int64_t cols, void* stream) {
  if (rows == 0) return;
  launch_kernel("gather_last_kernel", cuda_kernels::gather_last_kernel, grid_for(rows), kThreadsPerBlock, 0, stream, x,
                index, out, (long long)rows, int(cols));
}

void launch_topk(const float* x, int64_t k, bool largest, float* values, int64_t* indices, int64_t rows, int64_t cols,
                 void* stream) {
  if (rows == 0 || k == 0) return;
  launch_kernel("topk_kernel", cuda_kernels::topk_kernel, grid_for(rows), kThreadsPerBlock, 0, stream, x, int(k),
                largest, values, indices, (long long)rows, int(cols));
}

}  // namespace attn::cuda
