// The delta rule (core/backend_kernels.def's delta_rule and delta_rule_backward; Schlag, Irie &
// Schmidhuber 2021, docs/models.md §5.5) over contiguous float32 tensors, in the
// cuda/kernels/device.hpp dialect. Per row r, fast weights W ∈ ℝ^{N×M}:
//
//   v̄_t = W_{t−1} k_t,   u_t = β_t (v_t − v̄_t),   W_t = W_{t−1} + u_t k_tᵀ,   y_t = W_t q_t
//
// and the backward from W_0 = 0, with g_t = ∂L/∂y_t and G the gradient reaching W_t, for t = T … 1:
//
//   G ← G + g_t q_tᵀ      ∂q_t = W_tᵀ g_t      ∂u_t = G k_t      ∂v_t = β_t ∂u_t
//   ∂β_t = (v_t − v̄_t)ᵀ ∂u_t      ∂v̄_t = −β_t ∂u_t      ∂k_t = Gᵀ u_t + W_{t−1}ᵀ ∂v̄_t
//   G ← G + ∂v̄_t k_tᵀ
//
// Work mapping (cuda/kernels/value_row_scan.cuh): a block per (row, slice of value rows), a
// warp per value row i, each lane owning W[i, j] for its features j; time is sequential. A
// value row's write depends on that row alone (v̄_t[i] is a dot product along it), so v̄_t,
// y_t and ∂u_t are warp-shuffle reductions and the forward needs no barrier; ∂q_t, ∂k_t and
// ∂β_t sum over the value rows (the warps' partials added in warp order through shared
// memory, the slices' in sum_slices_kernel). W_{t−1} comes from the recomputed chunk.
#pragma once
#include "cuda/kernels/value_row_scan.cuh"

namespace attn::cuda_kernels {

// q, k [R, T, M], v [R, T, N], beta [R, T].
struct DeltaInputs {
  const float *q, *k, *v, *beta;
};

// dy [R, T, N] in; dv [R, T, N] out. dq, dk [R, T, M] and dbeta [R, T] are planes, one per
// slice of value rows (the outputs themselves when there is one slice), slice_stride floats
// apart for dq and dk, beta_slice_stride for dbeta.
struct DeltaGrads {
  const float* dy;
  float *dq, *dk, *dv, *dbeta;
  long long slice_stride, beta_slice_stride;
};

// Row r's [T, ·] parts of the inputs.
struct DeltaRow {
  const float *q, *k, *v, *beta;

  __device__ DeltaRow(const DeltaInputs& in, const ScanShape& s, int r)
      : q(in.q + (long long)r * s.length * s.features),
        k(in.k + (long long)r * s.length * s.features),
        v(in.v + (long long)r * s.length * s.values),
        beta(in.beta + (long long)r * s.length) {}
};

// v̄_t[i] = (W k_t)_i over this warp's value row, for every lane (a warp-shuffle sum).
__device__ inline float recall(const ScanShape& s, const ScanThread& me, const float* k, float* weights) {
  float dot = 0.0f;
  for (int e = 0; e < s.entries() && me.feature(e) < s.features; ++e) dot += own(weights, e) * k[me.feature(e)];
  return warp_reduce(dot, SumOp());
}

// The write of step t on this warp's value row of W (own() arrays at weights). Returns the
// lane's part of (W_t q_t)_i.
__device__ inline float delta_step(const ScanShape& s, const ScanThread& me, const DeltaRow& row, int t,
                                   float* weights) {
  const float *k = row.k + (long long)t * s.features, *q = row.q + (long long)t * s.features;
  const float write = row.beta[t] * (row.v[(long long)t * s.values + me.value] - recall(s, me, k, weights));
  float read = 0.0f;
  for (int e = 0; e < s.entries() && me.feature(e) < s.features; ++e) {
    float& entry = own(weights, e);
    entry += write * k[me.feature(e)];
    read += entry * q[me.feature(e)];
  }
  return read;
}

// The forward: W_0 from state [R, N, M], W_T back into it, y [R, T, N]. Shared memory:
// s.slice_floats() floats; no barriers (the warps are independent).
__global__ void delta_rule_kernel(DeltaInputs in, float* state, float* y, ScanShape s) {
  const ScanThread me(s);
  if (!me.active) return;  // a whole warp: the value rows past N of the last slice
  const DeltaRow row(in, s, me.row);
  float* own_weights = shared_memory<float>();
  float* row_state = state + me.row * s.state_size();
  load_state(s, me, row_state, own_weights);
  for (int t = 0; t < s.length; ++t) {
    const float read = warp_reduce(delta_step(s, me, row, t, own_weights), SumOp());
    if (me.lane == 0) y[((long long)me.row * s.length + t) * s.values + me.value] = read;
  }
  store_state(s, me, own_weights, row_state);
}

// One step of the backward walk for an active thread, from W_{t−1} (before) and W_t (after):
// the lane's parts of ∂q_t and ∂k_t go to its warp's partial vectors and the value row's
// part of ∂β_t to the third one; ∂v_t is written; G moves on to ∂L/∂W_{t−1}.
__device__ inline void delta_backward_step(const ScanShape& s, const ScanThread& me, const DeltaRow& row,
                                           const DeltaGrads& out, const ScanScratch& scratch, int t, float* before,
                                           float* after) {
  const long long at = (long long)me.row * s.length + t;  // the (row, t) of the [R, T, ·] tensors
  const float *k = row.k + (long long)t * s.features, *q = row.q + (long long)t * s.features;
  const float gi = out.dy[at * s.values + me.value], beta = row.beta[t];
  const float residual = row.v[(long long)t * s.values + me.value] - recall(s, me, k, before);  // v − v̄
  const float write = beta * residual;                                                        // u_t[i]
  float *dq = scratch.partial(s, 0, me.warp), *dk = scratch.partial(s, 1, me.warp);
  float dwrite = 0.0f;  // ∂u_t[i]
  for (int e = 0; e < s.entries() && me.feature(e) < s.features; ++e) {
    const int j = me.feature(e);
    float& g = own(scratch.gradient, e);
    g += gi * q[j];  // ∂L/∂W_t
    dq[j] = own(after, e) * gi;
    dwrite += g * k[j];
  }
  dwrite = warp_reduce(dwrite, SumOp());
  const float drecall = -beta * dwrite;  // ∂v̄_t[i]
  for (int e = 0; e < s.entries() && me.feature(e) < s.features; ++e) {
    const int j = me.feature(e);
    float& g = own(scratch.gradient, e);
    dk[j] = g * write + own(before, e) * drecall;
    g += drecall * k[j];  // ∂L/∂W_{t−1}
  }
  if (me.lane != 0) return;
  out.dv[at * s.values + me.value] = beta * dwrite;
  scratch.partial(s, 2, me.warp)[0] = residual * dwrite;
}

// The backward from W_0 = 0. boundaries: [R, chunks, N, M] floats of scratch. Shared memory:
// s.backward_shared_bytes().
__global__ void delta_rule_backward_kernel(DeltaInputs in, DeltaGrads out, float* boundaries, ScanShape s) {
  const ScanThread me(s);
  const DeltaRow row(in, s, me.row);
  const ScanScratch scratch(s);
  const long long plane = blockIdx.y * out.slice_stride, beta_plane = blockIdx.y * out.beta_slice_stride;
  scan_backward(
      s, me, scratch, boundaries, [&](int t, float* weights) { delta_step(s, me, row, t, weights); },
      [&](int t, float* before, float* after) { delta_backward_step(s, me, row, out, scratch, t, before, after); },
      [&](int t, int slice_rows) {
        const long long at = (long long)me.row * s.length + t, features_at = at * s.features;
        sum_warp_partials(scratch.partial(s, 0, 0), slice_rows, s.features, s.features, out.dq + plane + features_at);
        sum_warp_partials(scratch.partial(s, 1, 0), slice_rows, s.features, s.features, out.dk + plane + features_at);
        sum_warp_partials(scratch.partial(s, 2, 0), slice_rows, 1, s.features, out.dbeta + beta_plane + at);
      });
}

}  // namespace attn::cuda_kernels
