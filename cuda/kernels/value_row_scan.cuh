// The layout shared by the recurrent scans over a state S ∈ ℝ^{N×M} per row r (gated linear
// attention and the delta rule: cuda/kernels/gated_linear_attention.cuh, delta_rule.cuh), in
// the cuda/kernels/device.hpp dialect.
//
// Work mapping. Both rules update S one value row i at a time, and every quantity of their
// forward — S_t q_t, W k_t — is a dot product along a value row, over the M features. So:
// * a block per (row r = blockIdx.x, slice of value rows = blockIdx.y); one warp per value
//   row i of the slice, lane l owning the entries (i, l), (i, l + 32), ... of S;
// * time runs sequentially inside the block (the recurrence), and the dot products along a
//   value row are warp-shuffle reductions: no __syncthreads in the forward at all;
// * the entries a thread owns live in shared memory laid out [entry][thread] (a register
//   array would need M fixed at compile time), so a warp touching entry e hits 32 banks.
// The backward also needs sums over the value rows (∂q_t = S_tᵀ g_t, ∂k_t, ∂b_t): the warps'
// per-feature partials go through shared memory and are added in warp order (two barriers a
// step), and the slices' sums land in separate planes of a scratch tensor that
// sum_slices_kernel (cuda/kernels/sum_slices.cuh) adds in slice order afterwards:
// deterministic, no atomics.
//
// The backward from S_0 = 0 walks time backwards and needs S_{t−1} and S_t at each step. It
// reruns the forward storing S at chunk boundaries (global memory, [R, chunks, N, M]) and,
// chunk by chunk from the last, recomputes the chunk's states into shared memory from its
// boundary: never rebuilding a state by dividing by a gate, and never holding every S_t.
#pragma once
#include "cuda/kernels/block_reduce.cuh"
#include "cuda/kernels/scan_shape.hpp"

namespace attn::cuda_kernels {

// Where this thread sits: row r, value row i (active when i < N), and its lane's features.
struct ScanThread {
  int row, value, lane, warp;
  bool active;

  __device__ explicit ScanThread(const ScanShape& s)
      : row(int(blockIdx.x)),
        value(int(blockIdx.y) * s.value_rows + int(threadIdx.x / kWarpSize)),
        lane(int(threadIdx.x % kWarpSize)),
        warp(int(threadIdx.x / kWarpSize)),
        active(value < s.values) {}  // value is initialised first (declaration order)
  // The feature of this lane's entry e (valid when < M).
  __device__ int feature(int e) const { return lane + e * kScanLanes; }
};

// Entry e of this thread's own array of `entries` floats, stored [entry][thread] at base.
__device__ inline float& own(float* base, int e) { return base[(long long)e * blockDim.x + threadIdx.x]; }

// The backward's shared memory (ScanShape::backward_shared_bytes): states[τ] (τ = 0 … chunk)
// and the running gradient state, each a slice of own() arrays, then the warps' partials,
// [kScanSumVectors][value_rows][M].
struct ScanScratch {
  float* states;
  float* gradient;
  float* partials;
  long long state_floats;

  __device__ explicit ScanScratch(const ScanShape& s)
      : states(shared_memory<float>()),
        gradient(shared_memory<float>() + (s.chunk + 1) * s.slice_floats()),
        partials(gradient + s.slice_floats()),
        state_floats(s.slice_floats()) {}
  __device__ float* state(int step) const { return states + step * state_floats; }
  // The partial vector `vector` of warp w.
  __device__ float* partial(const ScanShape& s, int vector, int w) const {
    return partials + ((long long)vector * s.value_rows + w) * s.features;
  }
};

// Copies this thread's entries between its own() array and S [N, M] at `state` (row-major).
__device__ inline void load_state(const ScanShape& s, const ScanThread& me, const float* state, float* own_base) {
  for (int e = 0; e < s.entries(); ++e) {
    const int j = me.feature(e);
    own(own_base, e) = me.active && j < s.features ? state[(long long)me.value * s.features + j] : 0.0f;
  }
}
__device__ inline void store_state(const ScanShape& s, const ScanThread& me, float* own_base, float* state) {
  for (int e = 0; e < s.entries(); ++e) {
    const int j = me.feature(e);
    if (me.active && j < s.features) state[(long long)me.value * s.features + j] = own(own_base, e);
  }
}

// The chunk boundaries of row r, [chunks, N, M], in the backward's scratch.
__device__ inline float* boundary(const ScanShape& s, float* boundaries, int row, int chunk_index) {
  return boundaries + ((long long)row * s.chunks() + chunk_index) * s.state_size();
}

// out[j] = Σ_w partials[w · stride + j] in warp order, for j < width. Call between barriers:
// after every warp wrote its partials, before they are reused.
__device__ inline void sum_warp_partials(const float* partials, int value_rows, int width, int stride, float* out) {
  for (int j = int(threadIdx.x); j < width; j += int(blockDim.x)) {
    float sum = 0.0f;
    for (int w = 0; w < value_rows; ++w) sum += partials[(long long)w * stride + j];
    out[j] = sum;
  }
}

// The backward's walk for one block (every thread calls it: it holds the barriers), over
// the steps of the rule given as callables:
// * step(t, state): the forward step t on this thread's own() entries at state;
// * step_back(t, before, after): backward step t from S_{t−1} and S_t (own() arrays), writing
//   the warp's partials and the value row's own gradients;
// * store_sums(t, slice_rows): the partials' sums over the slice's value rows, after a barrier.
// step and step_back run on the active threads only (whole warps).
template <typename Step, typename StepBack, typename StoreSums>
__device__ void scan_backward(const ScanShape& s, const ScanThread& me, const ScanScratch& scratch, float* boundaries,
                              Step step, StepBack step_back, StoreSums store_sums) {
  const int first_value = int(blockIdx.y) * s.value_rows;
  const int slice_rows = s.values - first_value < s.value_rows ? s.values - first_value : s.value_rows;
  // The forward again, from S_0 = 0, keeping the state before each chunk (up to the last).
  for (int e = 0; e < s.entries(); ++e) own(scratch.gradient, e) = 0.0f;
  for (int c = 0; c < s.chunks(); ++c) {
    store_state(s, me, scratch.gradient, boundary(s, boundaries, me.row, c));
    for (int t = c * s.chunk; c + 1 < s.chunks() && t < (c + 1) * s.chunk && me.active; ++t)
      step(t, scratch.gradient);
  }
  for (int e = 0; e < s.entries(); ++e) own(scratch.gradient, e) = 0.0f;  // now the gradient state, 0 after T
  for (int c = s.chunks() - 1; c >= 0; --c) {
    const int t0 = c * s.chunk, t1 = t0 + s.chunk < s.length ? t0 + s.chunk : s.length;
    load_state(s, me, boundary(s, boundaries, me.row, c), scratch.state(0));
    for (int t = t0; t < t1 && me.active; ++t) {  // the chunk's states, from its boundary
      for (int e = 0; e < s.entries(); ++e) own(scratch.state(t - t0 + 1), e) = own(scratch.state(t - t0), e);
      step(t, scratch.state(t - t0 + 1));
    }
    for (int t = t1 - 1; t >= t0; --t) {
      if (me.active) step_back(t, scratch.state(t - t0), scratch.state(t - t0 + 1));
      __syncthreads();  // every warp's partials are written
      store_sums(t, slice_rows);
      __syncthreads();  // every thread has read them before the next step overwrites them
    }
  }
}

}  // namespace attn::cuda_kernels
