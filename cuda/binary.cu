// Launches the kernels over two strided operands (cuda/kernel_launch.hpp): the binary ops of
// cuda/kernels/binary.cuh and the strided copies of cuda/kernels/strided_copy.cuh.
#include "cuda/kernels/binary.cuh"
#include "cuda/kernels/strided_copy.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_binary(BinaryOp op, const float* a, const float* b, void* out, const cuda_kernels::StridedLayout& layout,
                   int64_t n, void* stream) {
  if (n == 0) return;
  const unsigned grid = grid_for(n);
  if (is_comparison(op))
    launch_kernel("binary_kernel", cuda_kernels::binary_kernel<bool>, grid, kThreadsPerBlock, 0, stream, op, a, b,
                  static_cast<bool*>(out), layout, (long long)n);
  else
    launch_kernel("binary_kernel", cuda_kernels::binary_kernel<float>, grid, kThreadsPerBlock, 0, stream, op, a, b,
                  static_cast<float*>(out), layout, (long long)n);
}

void launch_where(const bool* cond, const float* a, const float* b, float* out,
                  const cuda_kernels::StridedLayout& layout, int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("where_kernel", cuda_kernels::where_kernel, grid_for(n), kThreadsPerBlock, 0, stream, cond, a, b, out,
                layout, (long long)n);
}

namespace {

template <typename Word>
void launch_copy_of(const void* src, void* dst, const cuda_kernels::StridedLayout& layout, int64_t n, void* stream) {
  launch_kernel("strided_copy_kernel", cuda_kernels::strided_copy_kernel<Word>, grid_for(n), kThreadsPerBlock, 0,
                stream, static_cast<const Word*>(src), static_cast<Word*>(dst), layout, (long long)n);
}

}  // namespace

void launch_strided_copy(const void* src, void* dst, size_t element_size, const cuda_kernels::StridedLayout& layout,
                         int64_t n, void* stream) {
  if (n == 0) return;
  switch (element_size) {
    case 1: return launch_copy_of<unsigned char>(src, dst, layout, n, stream);
    case 4: return launch_copy_of<unsigned>(src, dst, layout, n, stream);
    case 8: return launch_copy_of<unsigned long long>(src, dst, layout, n, stream);
    default: check_cuda(int(cudaErrorInvalidValue), "strided_copy_kernel (element size other than 1, 4, 8)");
  }
}

}  // namespace attn::cuda
