// Launches the softmax kernels of cuda/kernels/softmax.cuh (cuda/kernel_launch.hpp): one
// block per row.
#include "cuda/kernels/softmax.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_softmax(const float* x, float* y, int64_t rows, int64_t cols, bool log, void* stream) {
  if (rows == 0) return;
  launch_kernel("softmax_kernel", cuda_kernels::softmax_kernel, unsigned(rows), kThreadsPerBlock,
                kReductionScratchBytes, stream, x, y, int(cols), log);
}

void launch_softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t cols, bool log,
                             void* stream) {
  if (rows == 0) return;
  launch_kernel("softmax_backward_kernel", cuda_kernels::softmax_backward_kernel, unsigned(rows), kThreadsPerBlock,
                kReductionScratchBytes, stream, y, dy, dx, int(cols), log);
}

}  // namespace attn::cuda
