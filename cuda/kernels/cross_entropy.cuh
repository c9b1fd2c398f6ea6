// Fused label-smoothed cross entropy over float32 logits [rows, V] and int64 targets
// (core/backend.hpp's label_smoothed_ce and its gradient; docs/models.md §1.6), in the
// cuda/kernels/device.hpp dialect, with the CPU's formulas (core/cpu/cross_entropy.cpp):
//   lse = log Σ_v exp(x_v),  nll = lse − x_y,  smooth = V·lse − Σ_v x_v,
//   loss = (1 − ε)·nll + (ε/V)·smooth,  dloss/dx_v = p_v − ε/V − (1 − ε)[v = y]
// Rows whose target is ignore_index contribute nothing. The row kernel writes each row's
// loss and nll; one block of kCrossEntropyTotalsThreads threads then sums them in float64 —
// each thread a run of consecutive rows in order, then the threads' sums in a fixed tree —
// so the totals do not depend on the launch, and finds the first target out of range.
#pragma once
#include "cuda/kernels/block_reduce.cuh"

namespace attn::cuda_kernels {

// One block per row (blockDim.x a multiple of 32, 32 doubles of shared memory).
__global__ void label_smoothed_ce_rows_kernel(const float* logits, const int64_t* targets, int classes,
                                              double epsilon, int64_t ignore_index, float* lse_out,
                                              double* row_loss, double* row_nll) {
  const long long row = blockIdx.x;
  const float* x = logits + row * classes;
  double* scratch = shared_memory<double>();
  float max = -INFINITY;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) max = x[c] > max ? x[c] : max;
  max = float(block_reduce(double(max), scratch, MaxOp(), -double(INFINITY)));
  double sum_exp = 0.0, sum_x = 0.0;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) {
    sum_exp += double(expf(x[c] - max));
    sum_x += double(x[c]);
  }
  sum_exp = block_reduce(sum_exp, scratch, SumOp(), 0.0);
  sum_x = block_reduce(sum_x, scratch, SumOp(), 0.0);
  if (threadIdx.x != 0) return;
  const double lse = double(max) + log(sum_exp);
  lse_out[row] = float(lse);
  const int64_t target = targets[row];
  if (target == ignore_index || target < 0 || target >= classes) {
    row_loss[row] = row_nll[row] = 0.0;  // invalid targets are reported by the totals kernel
    return;
  }
  const double nll = lse - double(x[target]);
  row_nll[row] = nll;
  row_loss[row] = (1.0 - epsilon) * nll + epsilon / double(classes) * (double(classes) * lse - sum_x);
}

// The totals kernel's block size: fixed, so the order of its sums is too.
constexpr unsigned kCrossEntropyTotalsThreads = 1024;

// Launched as one block of kCrossEntropyTotalsThreads threads with 32 doubles of shared
// memory: the totals, and the first row whose target is out of range (−1 when none).
__global__ void label_smoothed_ce_totals_kernel(const int64_t* targets, long long rows, int classes,
                                                int64_t ignore_index, const double* row_loss,
                                                const double* row_nll, double* loss, double* nll, double* count,
                                                int64_t* first_bad_row) {
  double* scratch = shared_memory<double>();
  const long long run = (rows + kCrossEntropyTotalsThreads - 1) / kCrossEntropyTotalsThreads;
  const long long first = (long long)threadIdx.x * run, end = first + run < rows ? first + run : rows;
  double total_loss = 0.0, total_nll = 0.0, counted = 0.0, first_bad = double(rows);
  for (long long r = first; r < end; ++r) {
    const int64_t target = targets[r];
    if (target == ignore_index) continue;
    if ((target < 0 || target >= classes) && first_bad == double(rows)) first_bad = double(r);
    total_loss += row_loss[r];
    total_nll += row_nll[r];
    counted += 1.0;
  }
  total_loss = block_reduce(total_loss, scratch, SumOp(), 0.0);
  total_nll = block_reduce(total_nll, scratch, SumOp(), 0.0);
  counted = block_reduce(counted, scratch, SumOp(), 0.0);
  first_bad = block_reduce(first_bad, scratch, MinOp(), double(rows));
  if (threadIdx.x != 0) return;
  *loss = total_loss;
  *nll = total_nll;
  *count = counted;
  *first_bad_row = first_bad < double(rows) ? int64_t(first_bad) : -1;
}

// grad[r, v] = scale · dloss/dx_v from the saved lse; 0 on ignored rows.
__global__ void label_smoothed_ce_backward_kernel(const float* logits, const int64_t* targets, const float* lse,
                                                  float uniform_share, float gold_share, float scale,
                                                  int64_t ignore_index, float* grad, long long rows, int classes) {
  const long long n = rows * classes, stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const long long row = i / classes;
    const int64_t target = targets[row];
    if (target == ignore_index) {
      grad[i] = 0.0f;
      continue;
    }
    const float g = expf(logits[i] - lse[row]) * scale - uniform_share;
    grad[i] = (i % classes == target) ? g - gold_share : g;
  }
}

}  // namespace attn::cuda_kernels
