// Launches the element-wise kernels of cuda/kernels/elementwise.cuh (cuda/kernel_launch.hpp).
#include "cuda/kernels/elementwise.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_fill(float value, float* y, int64_t n, void* stream) {
  if (n == 0) return;
  cuda_kernels::fill_kernel<<<grid_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(value, y, (long long)n);
  check_launch("fill_kernel");
}

void launch_unary(UnaryOp op, UnaryParams params, const float* x, float* y, int64_t n, void* stream) {
  if (n == 0) return;
  cuda_kernels::unary_kernel<<<grid_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(
      op, float(params.a), float(params.b), x, y, (long long)n);
  check_launch("unary_kernel");
}

void launch_unary_backward(UnaryOp op, UnaryParams params, const float* x, const float* y, const float* dy, float* dx,
                           int64_t n, void* stream) {
  if (n == 0) return;
  cuda_kernels::unary_backward_kernel<<<grid_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(
      op, float(params.a), float(params.b), x, y, dy, dx, (long long)n);
  check_launch("unary_backward_kernel");
}

void launch_bias_relu(float* y, const float* bias, int64_t rows, int64_t cols, void* stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  cuda_kernels::bias_relu_kernel<<<grid_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(y, bias, int(cols),
                                                                                          (long long)n);
  check_launch("bias_relu_kernel");
}

void launch_bias_relu_backward(const float* y, const float* dy, float* dz, float* dbias, int64_t rows, int64_t cols,
                               void* stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  cuda_kernels::relu_mask_backward_kernel<<<grid_for(n), kThreadsPerBlock, 0, as_stream(stream)>>>(y, dy, dz,
                                                                                                   (long long)n);
  check_launch("relu_mask_backward_kernel");
  if (dbias == nullptr) return;
  const unsigned column_blocks = unsigned((cols + kThreadsPerBlock - 1) / kThreadsPerBlock);
  cuda_kernels::column_sum_kernel<<<column_blocks, kThreadsPerBlock, 0, as_stream(stream)>>>(dz, dbias, int(rows),
                                                                                             int(cols));
  check_launch("column_sum_kernel");
}

}  // namespace attn::cuda
