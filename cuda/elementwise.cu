// Launches the element-wise kernels of cuda/kernels/elementwise.cuh (cuda/kernel_launch.hpp).
#include <algorithm>
#include <cstring>

#include "cuda/kernels/elementwise.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

namespace {

template <typename Word>
void launch_fill_of(const void* value, void* y, int64_t n, void* stream) {
  Word bits;
  std::memcpy(&bits, value, sizeof(Word));
  launch_kernel("fill_kernel", cuda_kernels::fill_kernel<Word>, grid_for(n), kThreadsPerBlock, 0, stream, bits,
                static_cast<Word*>(y), (long long)n);
}

}  // namespace

void launch_fill(const void* value, size_t element_size, void* y, int64_t n, void* stream) {
  if (n == 0) return;
  switch (element_size) {
    case 1: return launch_fill_of<unsigned char>(value, y, n, stream);
    case 4: return launch_fill_of<unsigned>(value, y, n, stream);
    case 8: return launch_fill_of<unsigned long long>(value, y, n, stream);
    default: check_cuda(int(cudaErrorInvalidValue), "fill_kernel (element size other than 1, 4, 8)");
  }
}

void launch_unary(UnaryOp op, UnaryParams params, const float* x, float* y, int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("unary_kernel", cuda_kernels::unary_kernel, grid_for(n), kThreadsPerBlock, 0, stream, op,
                float(params.a), float(params.b), x, y, (long long)n);
}

namespace {

template <typename T>
void launch_integer_unary_of(UnaryOp op, UnaryParams params, const void* x, void* y, int64_t n, void* stream) {
  launch_kernel("integer_unary_kernel", cuda_kernels::integer_unary_kernel<T>, grid_for(n), kThreadsPerBlock, 0,
                stream, op, T(params.a), T(params.b), static_cast<const T*>(x), static_cast<T*>(y), (long long)n);
}

}  // namespace

void launch_integer_unary(UnaryOp op, UnaryParams params, DType dtype, const void* x, void* y, int64_t n,
                          void* stream) {
  if (n == 0) return;
  if (!cuda_kernels::is_integer_unary(op))
    check_cuda(int(cudaErrorInvalidValue), "integer_unary_kernel (a unary op integer tensors do not take)");
  if (dtype == DType::Int64) return launch_integer_unary_of<long long>(op, params, x, y, n, stream);
  if (dtype == DType::Int32) return launch_integer_unary_of<int>(op, params, x, y, n, stream);
  check_cuda(int(cudaErrorInvalidValue), "integer_unary_kernel (a dtype other than int32, int64)");
}

void launch_unary_backward(UnaryOp op, UnaryParams params, const float* x, const float* y, const float* dy, float* dx,
                           int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("unary_backward_kernel", cuda_kernels::unary_backward_kernel, grid_for(n), kThreadsPerBlock, 0, stream,
                op, float(params.a), float(params.b), x, y, dy, dx, (long long)n);
}

void launch_bias_relu(float* y, const float* bias, int64_t rows, int64_t cols, void* stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  launch_kernel("bias_relu_kernel", cuda_kernels::bias_relu_kernel, grid_for(n), kThreadsPerBlock, 0, stream, y, bias,
                int(cols), (long long)n);
}

int64_t column_chunks(int64_t rows, int64_t cols) {
  constexpr int64_t kThreadsWanted = 1 << 16, kMinChunkRows = 32, kMaxChunks = 1024;
  if (cols == 0) return 1;
  return std::max<int64_t>(1, std::min({(kThreadsWanted + cols - 1) / cols, rows / kMinChunkRows, kMaxChunks}));
}

void launch_bias_relu_backward(const float* y, const float* dy, float* dz, float* dbias, double* partial, int64_t rows,
                               int64_t cols, void* stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  launch_kernel("relu_mask_backward_kernel", cuda_kernels::relu_mask_backward_kernel, grid_for(n), kThreadsPerBlock, 0,
                stream, y, dy, dz, (long long)n);
  if (dbias != nullptr) launch_column_sums(dz, dbias, partial, rows, cols, stream);
}

}  // namespace attn::cuda
