// The sizes of one recurrent scan over a state S ∈ ℝ^{N×M} per row and how its launch splits
// it (cuda/kernels/value_row_scan.cuh): a plain struct passed by value to the kernels, free
// of the kernel dialect so host code can fill it (cuda/scan_plan.hpp), and the shared memory
// its blocks need.
#pragma once
#include "cuda/kernels/host_device.hpp"

namespace attn::cuda_kernels {

constexpr int kScanLanes = 32;  // a warp: the lanes sharing one value row
// The per-feature sums over the value rows a backward forms (∂q, ∂k and ∂b or ∂β).
constexpr int kScanSumVectors = 3;

struct ScanShape {
  int rows, length, features, values;  // R, T, M, N
  int value_rows;                      // per block, a warp each
  int chunk;                           // steps per recomputed chunk of the backward

  ATTN_HD int entries() const { return (features + kScanLanes - 1) / kScanLanes; }  // of S per lane
  ATTN_HD int chunks() const { return (length + chunk - 1) / chunk; }
  ATTN_HD int slices() const { return (values + value_rows - 1) / value_rows; }  // blocks per row
  ATTN_HD long long state_size() const { return (long long)values * features; }
  // Floats of one block's slice of a state: the forward's shared memory.
  ATTN_HD long long slice_floats() const { return (long long)value_rows * kScanLanes * entries(); }
  // The backward's shared memory: chunk + 1 states, the running gradient state, the warps'
  // partial sums.
  ATTN_HD long long backward_shared_bytes() const {
    const long long partials = (long long)kScanSumVectors * value_rows * features;
    return (long long)sizeof(float) * ((chunk + 2) * slice_floats() + partials);
  }
};

}  // namespace attn::cuda_kernels
