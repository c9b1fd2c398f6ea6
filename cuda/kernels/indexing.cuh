// Gathers, scatters and selections by index over float32 matrices (core/backend.hpp's
// index_select_rows and index_add_rows (index_links_kernel, index_add_linked_rows_kernel) — an embedding's forward and backward — gather_last
// and topk), in the cuda/kernels/device.hpp dialect. Indices were validated by core/ops.
#pragma once
#include "cuda/kernels/block_reduce.cuh"
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

// Device indices are checked by a deferred check (core/deferred_checks.hpp) that reports
// after the kernel ran, so the kernels stay inside weight [weight_rows, width] on bad input:
// a row out of range is read as zeros and receives nothing.
__device__ inline bool row_in_range(int64_t row, long long weight_rows) { return row >= 0 && row < weight_rows; }

// out[i, d] = weight[indices[i], d] over out [rows, width], for elements of any type T of the
// element's size (the bytes are moved, not interpreted).
template <typename T>
__global__ void index_select_rows_kernel(const T* weight, long long weight_rows, const int64_t* indices, T* out,
                                         long long rows, int width) {
  const long long n = rows * width, stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t row = indices[i / width];
    out[i] = row_in_range(row, weight_rows) ? weight[row * width + i % width] : T(0);
  }
}

// grad_weight[indices[i], :] += src[i, :] runs in two steps, so that the rows of one index are
// added in index order — as on the CPU, deterministic, no atomics — while distinct indices
// run side by side. First each row i learns the next row of its index (next[i], −1 at the
// last) and whether it is the first of its index (first[i]): a warp per row compares 32
// indices at a time and the lanes agree by warp reductions (a thread per row scanning all the
// others alone took 0.36 ms for a 4,096-token batch on an H200); then a block per first row
// walks its index's rows in order, a thread per column.
__global__ void index_links_kernel(const int64_t* indices, long long rows, long long* next, long long* first) {
  const int lane = int(threadIdx.x % kWarpSize);
  const long long warps = (long long)blockDim.x / kWarpSize * gridDim.x;
  for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / kWarpSize; i < rows; i += warps) {
    const int64_t row = indices[i];
    int earlier = 0;  // the same for every lane of the warp, as are the loops' bounds
    for (long long base = 0; base < i && !earlier; base += kWarpSize) {
      const long long j = base + lane;
      earlier = warp_reduce(int(j < i && indices[j] == row), MaxOp());
    }
    long long later = rows;
    for (long long base = i + 1; base < rows && later == rows; base += kWarpSize) {
      const long long j = base + lane;
      later = warp_reduce(j < rows && indices[j] == row ? j : rows, MinOp());
    }
    if (lane != 0) continue;
    next[i] = later < rows ? later : -1;
    first[i] = !earlier;
  }
}

// Rows out of [0, weight_rows) (left to the deferred check) are left out.
__global__ void index_add_linked_rows_kernel(float* grad_weight, long long weight_rows, const int64_t* indices,
                                             const float* src, const long long* next, const long long* first,
                                             long long rows, int width) {
  for (long long i = blockIdx.x; i < rows; i += gridDim.x) {
    if (!first[i] || !row_in_range(indices[i], weight_rows)) continue;
    float* const out = grad_weight + indices[i] * width;
    for (int d = int(threadIdx.x); d < width; d += int(blockDim.x)) {
      float sum = out[d];
      for (long long k = i; k >= 0; k = next[k]) sum += src[k * width + d];
      out[d] = sum;
    }
  }
}

// out[r] = x[r, index[r]] over x [rows, cols].
__global__ void gather_last_kernel(const float* x, const int64_t* index, float* out, long long rows, int cols) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride)
    out[r] = x[r * cols + index[r]];
}

// The k largest (or smallest) of each row of x [rows, cols], sorted, ties to the lower index:
// one thread per row picks them one after another, each time the best element that ranks
// after the previous pick (value, then index) — O(k·cols) per row, meant for the small k of
// beam search, and needing no scratch memory.
__global__ void topk_kernel(const float* x, int k, bool largest, float* values, int64_t* indices, long long rows,
                            int cols) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
    const float* row = x + r * cols;
    float previous_value = 0.0f;
    int previous_index = -1;
    for (int j = 0; j < k; ++j) {
      int best = -1;
      for (int c = 0; c < cols; ++c) {
        const float v = row[c];
        if (previous_index >= 0) {  // only elements ranking after the previous pick
          const bool after = largest ? (v < previous_value || (v == previous_value && c > previous_index))
                                     : (v > previous_value || (v == previous_value && c > previous_index));
          if (!after) continue;
        }
        if (best < 0 || (largest ? v > row[best] : v < row[best])) best = c;
      }
      values[r * k + j] = row[best];
      indices[r * k + j] = best;
      previous_value = row[best];
      previous_index = best;
    }
  }
}

}  // namespace attn::cuda_kernels
