// How a recurrent scan (gated linear attention, the delta rule) is split over the GPU
// (cuda/kernels/value_row_scan.cuh), and the scratch its backward needs. Host code.
#pragma once
#include <climits>

#include "core/error.hpp"
#include "cuda/kernels/scan_shape.hpp"

namespace attn::cuda {

// The dynamic shared memory every GPU gives a block without opting in.
constexpr long long kScanSharedBudget = 48 * 1024;
constexpr int kScanMaxValueRows = 16;  // warps per block: 512 threads
constexpr int kScanMaxChunk = 64;      // steps per recomputed chunk

// R rows of T steps, M features, N values: a block per row and slice of up to 16 value rows,
// and the longest backward chunk (at most 64 steps) whose states fit the shared-memory budget
// — fewer value rows per block where M is too wide for even one step. Longer chunks mean
// fewer boundary states in global memory; the recomputation costs one forward either way.
inline cuda_kernels::ScanShape plan_scan(const char* kernel, int64_t rows, int64_t length, int64_t features,
                                         int64_t values) {
  ATTN_CHECK(rows <= INT_MAX && length <= INT_MAX && features <= INT_MAX && values <= INT_MAX,
             "the cuda backend's {} takes at most {} rows, steps, features and values; got {} × {}, M {}, N {}", kernel,
             INT_MAX, rows, length, features, values);
  cuda_kernels::ScanShape s{int(rows), int(length), int(features), int(values), 0, 0};
  s.value_rows = int(values < kScanMaxValueRows ? (values > 0 ? values : 1) : kScanMaxValueRows);
  while (true) {
    s.chunk = int(length < kScanMaxChunk ? (length > 0 ? length : 1) : kScanMaxChunk);
    while (s.chunk > 1 && s.backward_shared_bytes() > kScanSharedBudget) --s.chunk;
    if (s.backward_shared_bytes() <= kScanSharedBudget || s.value_rows == 1) break;
    s.value_rows = (s.value_rows + 1) / 2;
  }
  ATTN_CHECK(s.backward_shared_bytes() <= kScanSharedBudget,
             "the cuda backend's {} keeps a state row of M features in {} KiB of shared memory; M = {} is too wide",
             kernel, kScanSharedBudget / 1024, features);
  ATTN_CHECK(s.slices() <= 65535, "the cuda backend's {} splits N = {} values into {} blocks per row, at most 65535",
             kernel, values, s.slices());
  return s;
}

// Floats of global scratch for a backward: the chunk boundaries [R, chunks, N, M], then, when
// the value rows span several slices, each slice's planes of the kScanSumVectors sums [R, T, M].
inline int64_t scan_scratch_floats(const cuda_kernels::ScanShape& s) {
  const int64_t boundaries = int64_t(s.rows) * s.chunks() * s.state_size();
  const int64_t planes = s.slices() > 1 ? int64_t(cuda_kernels::kScanSumVectors) * s.slices() * s.rows * s.length *
                                              s.features
                                        : 0;
  return boundaries + planes;
}

}  // namespace attn::cuda
