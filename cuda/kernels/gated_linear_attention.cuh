// Gated linear attention (core/backend_kernels.def's gated_linear_attention and its backward;
// docs/models.md §5.0, §5.6), the recurrence of every kernelized and decaying attention, over
// contiguous float32 tensors in the cuda/kernels/device.hpp dialect. Per row r:
//
//   S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k_tᵀ,   y_t = S_t q_t        (S ∈ ℝ^{N×M}; a, b null: ones)
//
// and the backward from S_0 = 0, with g_t = ∂L/∂y_t and U_t = ∂L/∂S_t walked from t = T down:
//
//   U_t = g_t q_tᵀ + (a_{t+1} b_{t+1}ᵀ) ⊙ U_{t+1}
//   ∂q_t = S_tᵀ g_t    ∂v_t = U_t k_t    ∂k_t = U_tᵀ v_t
//   ∂a_t = (U_t ⊙ S_{t−1}) b_t           ∂b_t = (U_t ⊙ S_{t−1})ᵀ a_t
//
// Work mapping (cuda/kernels/value_row_scan.cuh): a block per (row, slice of value rows), a
// warp per value row i, each lane owning S[i, j] for its features j; time is sequential. y_t,
// ∂v_t and ∂a_t are dot products along value row i (warp shuffles, written by lane 0); ∂q_t,
// ∂k_t and ∂b_t sum over the value rows (the warps' partials added in warp order through
// shared memory, the slices' in sum_slices_kernel). S_{t−1} comes from the recomputed chunk,
// never from dividing S_t by a gate.
#pragma once
#include "cuda/kernels/value_row_scan.cuh"

namespace attn::cuda_kernels {

// q, k [R, T, M], v [R, T, N], gates a [R, T, N] and b [R, T, M] (null: ones).
struct GatedInputs {
  const float *q, *k, *v, *a, *b;
};

// dy [R, T, N] in; dv and da (null: no value gate) [R, T, N] out. dq, dk and db (null: no key
// gate) are [R, T, M] planes, one per slice of value rows, slice_stride floats apart (the
// outputs themselves when there is one slice).
struct GatedGrads {
  const float* dy;
  float *dq, *dk, *dv, *da, *db;
  long long slice_stride;
};

// Row r's [T, ·] parts of the inputs.
struct GatedRow {
  const float *q, *k, *v, *a, *b;

  __device__ GatedRow(const GatedInputs& in, const ScanShape& s, int r)
      : q(in.q + (long long)r * s.length * s.features),
        k(in.k + (long long)r * s.length * s.features),
        v(in.v + (long long)r * s.length * s.values),
        a(in.a ? in.a + (long long)r * s.length * s.values : nullptr),
        b(in.b ? in.b + (long long)r * s.length * s.features : nullptr) {}
};

// Step t on this thread's entries of S (own() arrays at state, an active thread's): S ← (a_t
// b_tᵀ) ⊙ S + v_t k_tᵀ. Returns the lane's part of (S_t q_t)_i.
__device__ inline float gated_step(const ScanShape& s, const ScanThread& me, const GatedRow& row, int t, float* state) {
  const float vi = row.v[(long long)t * s.values + me.value];
  const float ai = row.a ? row.a[(long long)t * s.values + me.value] : 1.0f;
  const float *k = row.k + (long long)t * s.features, *q = row.q + (long long)t * s.features;
  const float* b = row.b ? row.b + (long long)t * s.features : nullptr;
  float read = 0.0f;
  for (int e = 0; e < s.entries() && me.feature(e) < s.features; ++e) {
    const int j = me.feature(e);
    float& entry = own(state, e);
    entry = (b ? ai * b[j] : ai) * entry + vi * k[j];
    read += entry * q[j];
  }
  return read;
}

// The forward: S_0 from state [R, N, M], S_T back into it, y [R, T, N]. Shared memory:
// s.slice_floats() floats; no barriers (the warps are independent).
__global__ void gated_linear_attention_kernel(GatedInputs in, float* state, float* y, ScanShape s) {
  const ScanThread me(s);
  if (!me.active) return;  // a whole warp: the value rows past N of the last slice
  const GatedRow row(in, s, me.row);
  float* own_state = shared_memory<float>();
  float* row_state = state + me.row * s.state_size();
  load_state(s, me, row_state, own_state);
  for (int t = 0; t < s.length; ++t) {
    const float read = warp_reduce(gated_step(s, me, row, t, own_state), SumOp());
    if (me.lane == 0) y[((long long)me.row * s.length + t) * s.values + me.value] = read;
  }
  store_state(s, me, own_state, row_state);
}

// One step of the backward walk for an active thread, from S_{t−1} (before) and S_t (after):
// U gains g_t q_tᵀ, the lane's parts of ∂q_t, ∂k_t, ∂b_t go to its warp's partial vectors,
// ∂v_t and ∂a_t are written, and U carries the gate of step t on to step t − 1.
__device__ inline void gated_backward_step(const ScanShape& s, const ScanThread& me, const GatedRow& row,
                                           const GatedGrads& out, const ScanScratch& scratch, int t, float* before,
                                           float* after) {
  const long long at = (long long)me.row * s.length + t;  // the (row, t) of the [R, T, ·] tensors
  const float gi = out.dy[at * s.values + me.value], vi = row.v[(long long)t * s.values + me.value];
  const float ai = row.a ? row.a[(long long)t * s.values + me.value] : 1.0f;
  const float *k = row.k + (long long)t * s.features, *q = row.q + (long long)t * s.features;
  const float* b = row.b ? row.b + (long long)t * s.features : nullptr;
  float *dq = scratch.partial(s, 0, me.warp), *dk = scratch.partial(s, 1, me.warp);
  float* db = scratch.partial(s, 2, me.warp);
  const bool gated = row.a || row.b;
  float dv = 0.0f, da = 0.0f;
  for (int e = 0; e < s.entries() && me.feature(e) < s.features; ++e) {
    const int j = me.feature(e);
    float& u = own(scratch.gradient, e);
    u += gi * q[j];  // U_t
    dq[j] = own(after, e) * gi;
    dv += u * k[j];
    dk[j] = u * vi;
    if (gated) {
      const float bj = b ? b[j] : 1.0f;
      const float dgate = u * own(before, e);  // ∂L/∂(a_t b_tᵀ)[i, j]
      da += dgate * bj;
      if (b) db[j] = dgate * ai;
      u *= ai * bj;
    }
  }
  dv = warp_reduce(dv, SumOp());
  if (row.a) da = warp_reduce(da, SumOp());
  if (me.lane != 0) return;
  out.dv[at * s.values + me.value] = dv;
  if (row.a) out.da[at * s.values + me.value] = da;
}

// The backward from S_0 = 0. boundaries: [R, chunks, N, M] floats of scratch. Shared memory:
// s.backward_shared_bytes().
__global__ void gated_linear_attention_backward_kernel(GatedInputs in, GatedGrads out, float* boundaries,
                                                       ScanShape s) {
  const ScanThread me(s);
  const GatedRow row(in, s, me.row);
  const ScanScratch scratch(s);
  const long long plane = blockIdx.y * out.slice_stride;
  scan_backward(
      s, me, scratch, boundaries, [&](int t, float* state) { gated_step(s, me, row, t, state); },
      [&](int t, float* before, float* after) { gated_backward_step(s, me, row, out, scratch, t, before, after); },
      [&](int t, int slice_rows) {
        const long long at = ((long long)me.row * s.length + t) * s.features;
        const auto sum = [&](int vector, float* grad) {
          sum_warp_partials(scratch.partial(s, vector, 0), slice_rows, s.features, s.features, grad + plane + at);
        };
        sum(0, out.dq);
        sum(1, out.dk);
        if (out.db) sum(2, out.db);
      });
}

}  // namespace attn::cuda_kernels
