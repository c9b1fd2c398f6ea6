// Launches the indexing kernels of cuda/kernels/indexing.cuh (cuda/kernel_launch.hpp).
#include <algorithm>

#include "cuda/kernels/indexing.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

namespace {

template <typename T>
void launch_index_select_rows_of(const void* weight, int64_t weight_rows, const int64_t* indices, void* out,
                                 int64_t rows, int64_t width, void* stream) {
  launch_kernel("index_select_rows_kernel", cuda_kernels::index_select_rows_kernel<T>, grid_for(rows * width),
                kThreadsPerBlock, 0, stream, static_cast<const T*>(weight), (long long)weight_rows, indices,
                static_cast<T*>(out), (long long)rows, int(width));
}

}  // namespace

void launch_index_select_rows(const void* weight, int64_t weight_rows, const int64_t* indices, void* out,
                              size_t element_size, int64_t rows, int64_t width, void* stream) {
  if (rows * width == 0) return;
  switch (element_size) {
    case 1: return launch_index_select_rows_of<uint8_t>(weight, weight_rows, indices, out, rows, width, stream);
    case 4: return launch_index_select_rows_of<uint32_t>(weight, weight_rows, indices, out, rows, width, stream);
    case 8: return launch_index_select_rows_of<uint64_t>(weight, weight_rows, indices, out, rows, width, stream);
    default: check_cuda(int(cudaErrorInvalidValue), "index_select_rows_kernel (element size)");
  }
}

void launch_index_add_rows(float* grad_weight, int64_t weight_rows, const int64_t* indices, const float* src,
                           int64_t rows, int64_t width, long long* links, void* stream) {
  if (rows * width == 0) return;
  long long *next = links, *first = links + rows;
  launch_kernel("index_links_kernel", cuda_kernels::index_links_kernel, grid_for(rows * cuda_kernels::kWarpSize),
                kThreadsPerBlock, 0, stream, indices, (long long)rows, next, first);
  launch_kernel("index_add_linked_rows_kernel", cuda_kernels::index_add_linked_rows_kernel,
                unsigned(std::min<int64_t>(rows, kMaxGridBlocks)), kThreadsPerBlock, 0, stream, grad_weight,
                (long long)weight_rows, indices, src, static_cast<const long long*>(next),
                static_cast<const long long*>(first), (long long)rows, int(width));
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
