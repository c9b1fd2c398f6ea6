// Launches the training-step kernels of cuda/kernels/parameter_update.cuh
// (cuda/kernel_launch.hpp).
#include "cuda/kernels/parameter_update.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, const AdamUpdate& update,
                        int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("adam_update_kernel", cuda_kernels::adam_update_kernel, grid_for(n), kThreadsPerBlock, 0, stream, param,
                grad, exp_avg, exp_avg_sq, update, (long long)n);
}

void launch_nag_update(float* param, const float* grad, float* buffer, const NagUpdate& update, int64_t n,
                       void* stream) {
  if (n == 0) return;
  launch_kernel("nag_update_kernel", cuda_kernels::nag_update_kernel, grid_for(n), kThreadsPerBlock, 0, stream, param,
                grad, buffer, update, (long long)n);
}

int64_t sum_of_squares_blocks(int64_t n) {
  constexpr int64_t kElementsPerBlock = 8 * kThreadsPerBlock, kMaxBlocks = 1024;
  const int64_t blocks = (n + kElementsPerBlock - 1) / kElementsPerBlock;
  return blocks < 1 ? 1 : (blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

void launch_add_sum_of_squares(const float* x, double* partial, double* total, int64_t n, void* stream) {
  const auto blocks = unsigned(sum_of_squares_blocks(n));
  launch_kernel("sum_of_squares_partials_kernel", cuda_kernels::sum_of_squares_partials_kernel, blocks,
                kThreadsPerBlock, 32 * sizeof(double), stream, x, partial, (long long)n);
  launch_kernel("add_partials_kernel", cuda_kernels::add_partials_kernel, 1, 1, 0, stream, partial, int(blocks), total);
}

void launch_scale_check_finite(float* x, double scale, float* found_nonfinite, int64_t n, void* stream) {
  if (n == 0) return;
  launch_kernel("scale_check_finite_kernel", cuda_kernels::scale_check_finite_kernel, grid_for(n), kThreadsPerBlock, 0,
                stream, x, float(scale), found_nonfinite, (long long)n);
}

}  // namespace attn::cuda
