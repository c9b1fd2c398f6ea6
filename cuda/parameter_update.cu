// Launches the training-step kernels of cuda/kernels/parameter_update.cuh
// (cuda/kernel_launch.hpp): one block per kGroupBlockElements elements of the group.
#include "cuda/kernels/parameter_update.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_adam_update(const cuda_kernels::AdamGroup& group, void* stream) {
  if (group.blocks.blocks() == 0) return;
  launch_kernel("adam_update_kernel", cuda_kernels::adam_update_kernel, unsigned(group.blocks.blocks()),
                kThreadsPerBlock, 0, stream, group);
}

void launch_nag_update(const cuda_kernels::NagGroup& group, void* stream) {
  if (group.blocks.blocks() == 0) return;
  launch_kernel("nag_update_kernel", cuda_kernels::nag_update_kernel, unsigned(group.blocks.blocks()),
                kThreadsPerBlock, 0, stream, group);
}

void launch_moving_average(const cuda_kernels::AverageGroup& group, double decay, void* stream) {
  if (group.blocks.blocks() == 0) return;
  launch_kernel("moving_average_kernel", cuda_kernels::moving_average_kernel, unsigned(group.blocks.blocks()),
                kThreadsPerBlock, 0, stream, group, float(decay), float(1.0 - decay));
}

void launch_sum_of_squares_partials(const cuda_kernels::FloatGroup& group, double* partial, void* stream) {
  if (group.blocks.blocks() == 0) return;
  launch_kernel("sum_of_squares_partials_kernel", cuda_kernels::sum_of_squares_partials_kernel,
                unsigned(group.blocks.blocks()), kThreadsPerBlock, 32 * sizeof(double), stream, group, partial);
}

void launch_add_partials(const double* partial, int64_t count, double* total, void* stream) {
  launch_kernel("add_partials_kernel", cuda_kernels::add_partials_kernel, 1, kThreadsPerBlock, 32 * sizeof(double),
                stream, partial, (long long)count, total);
}

void launch_scale_check_finite(const cuda_kernels::FloatGroup& group, double scale, float* found_nonfinite,
                               void* stream) {
  if (group.blocks.blocks() == 0) return;
  launch_kernel("scale_check_finite_kernel", cuda_kernels::scale_check_finite_kernel, unsigned(group.blocks.blocks()),
                kThreadsPerBlock, 0, stream, group, float(scale), found_nonfinite);
}

}  // namespace attn::cuda
