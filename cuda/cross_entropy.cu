// Launches the cross-entropy kernels of cuda/kernels/cross_entropy.cuh (cuda/kernel_launch.hpp):
// one block per row, then one thread for the totals.
#include "cuda/kernels/cross_entropy.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

void launch_label_smoothed_ce(const float* logits, const int64_t* targets, double epsilon, int64_t ignore_index,
                              float* lse, double* row_loss, double* row_nll, double* loss, double* nll, double* count,
                              int64_t* first_bad_row, int64_t rows, int64_t classes, void* stream) {
  if (rows > 0) {
    launch_kernel("label_smoothed_ce_rows_kernel", cuda_kernels::label_smoothed_ce_rows_kernel, unsigned(rows),
                  kThreadsPerBlock, 32 * sizeof(double), stream, logits, targets, int(classes), epsilon, ignore_index,
                  lse, row_loss, row_nll);
  }
  launch_kernel("label_smoothed_ce_totals_kernel", cuda_kernels::label_smoothed_ce_totals_kernel, 1,
                cuda_kernels::kCrossEntropyTotalsThreads, 32 * sizeof(double), stream, targets, (long long)rows,
                int(classes), ignore_index, row_loss, row_nll, loss, nll, count, first_bad_row);
}

void launch_label_smoothed_ce_backward(const float* logits, const int64_t* targets, const float* lse, double epsilon,
                                       int64_t ignore_index, double scale, float* grad, int64_t rows, int64_t classes,
                                       void* stream) {
  if (rows == 0) return;
  const auto uniform_share = float(scale * epsilon / double(classes)), gold_share = float(scale * (1.0 - epsilon));
  launch_kernel("label_smoothed_ce_backward_kernel", cuda_kernels::label_smoothed_ce_backward_kernel,
                grid_for(rows * classes), kThreadsPerBlock, 0, stream, logits, targets, lse, uniform_share, gold_share,
                float(scale), ignore_index, grad, (long long)rows, int(classes));
}

}  // namespace attn::cuda
