// Launches the kernels over two strided operands (cuda/kernel_launch.hpp): the binary ops of
// cuda/kernels/binary.cuh and the strided and converting copies of cuda/kernels/strided_copy.cuh.
#include "cuda/kernels/binary.cuh"
#include "cuda/kernels/strided_copy.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

namespace {

template <typename T>
void launch_binary_of(BinaryOp op, const void* a, const void* b, void* out, const cuda_kernels::StridedLayout& layout,
                      int64_t n, void* stream) {
  const auto a_data = static_cast<const T*>(a), b_data = static_cast<const T*>(b);
  if (is_comparison(op))
    launch_kernel("binary_kernel", cuda_kernels::binary_kernel<T, bool>, grid_for(n), kThreadsPerBlock, 0, stream, op,
                  a_data, b_data, static_cast<bool*>(out), layout, (long long)n);
  else
    launch_kernel("binary_kernel", cuda_kernels::binary_kernel<T, T>, grid_for(n), kThreadsPerBlock, 0, stream, op,
                  a_data, b_data, static_cast<T*>(out), layout, (long long)n);
}

}  // namespace

void launch_binary(BinaryOp op, DType dtype, const void* a, const void* b, void* out,
                   const cuda_kernels::StridedLayout& layout, int64_t n, void* stream) {
  if (n == 0) return;
  switch (dtype) {
    case DType::Float32: return launch_binary_of<float>(op, a, b, out, layout, n, stream);
    case DType::Int32: return launch_binary_of<int>(op, a, b, out, layout, n, stream);
    case DType::Int64: return launch_binary_of<long long>(op, a, b, out, layout, n, stream);
    case DType::Bool: return launch_binary_of<bool>(op, a, b, out, layout, n, stream);
    default: check_cuda(int(cudaErrorInvalidValue), "binary_kernel (a dtype other than float32, int32, int64, bool)");
  }
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

namespace {

// Calls visit(T{}) with T the C++ type of dtype's elements.
template <typename Visit>
void with_element_type(DType dtype, Visit visit) {
  switch (dtype) {
    case DType::Float32: return visit(float{});
    case DType::Float64: return visit(double{});
    case DType::Int32: return visit(int{});
    case DType::Int64: return visit((long long){});
    case DType::Bool: return visit(bool{});
  }
}

}  // namespace

void launch_convert_copy(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                         const cuda_kernels::StridedLayout& layout, int64_t n, void* stream) {
  if (n == 0) return;
  with_element_type(src_dtype, [&](auto src_element) {
    with_element_type(dst_dtype, [&](auto dst_element) {
      using Src = decltype(src_element);
      using Dst = decltype(dst_element);
      launch_kernel("convert_copy_kernel", cuda_kernels::convert_copy_kernel<Src, Dst>, grid_for(n), kThreadsPerBlock,
                    0, stream, static_cast<const Src*>(src), static_cast<Dst*>(dst), layout, (long long)n);
    });
  });
}

}  // namespace attn::cuda
