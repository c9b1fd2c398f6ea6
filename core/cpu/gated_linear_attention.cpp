// CPU gated linear attention: the recurrence every kernelized and decaying attention runs on
// (docs/models.md §5.0, §5.2, §5.6). Per row r (a batch × head pair), with S ∈ ℝ^{N×M}
// (values along the rows, features along the columns):
//
//   S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k_tᵀ          y_t = S_t q_t
//
// a ≡ 1 and b ≡ 1 give the additive rule; a scalar gate broadcast over a gives RFA's gated
// rule; both gates give the decaying fast weights of Mao (2022).
//
// Backward (§5.6, "Recurrent"), with g_t = ∂L/∂y_t and U_t = ∂L/∂S_t:
//
//   U_t = g_t q_tᵀ + (a_{t+1} b_{t+1}ᵀ) ⊙ U_{t+1}
//   ∂L/∂q_t = S_tᵀ g_t      ∂L/∂v_t = U_t k_t      ∂L/∂k_t = U_tᵀ v_t
//   ∂L/∂a_t = (U_t ⊙ S_{t−1}) b_t                  ∂L/∂b_t = (U_t ⊙ S_{t−1})ᵀ a_t
//
// S_{t−1} is needed while walking t backwards. It is never rebuilt by dividing by a gate (a
// gate near 0 would blow up): the forward scan is rerun storing S at chunk boundaries, and
// each chunk's states are recomputed from its boundary when the backward walk reaches it.
// Memory per thread: (T/C + C + 1)·N·M values, never B×H×T×N×M.
//
// Rows are independent and spread over the OpenMP threads; the inner loops run over the M
// contiguous features of a state row (vectorized). Without gates and over more than a few
// positions, the additive rule runs in chunks of GEMMs instead (additive_linear_attention.hpp).
#include <algorithm>
#include <vector>

#include "core/cpu/additive_linear_attention.hpp"
#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {
namespace {

// Time steps per recomputed chunk of the backward.
constexpr int64_t kChunk = 64;

struct ScanShape {
  int64_t rows, length, features, values;  // R, T, M, N

  explicit ScanShape(const Tensor& q, const Tensor& v)
      : rows(q.size(0)), length(q.size(1)), features(q.size(2)), values(v.size(2)) {}
  int64_t state_size() const { return values * features; }
  // Rows per parallel chunk: about kParallelGrain multiply-adds.
  int64_t grain() const { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, length * state_size())); }
};

// One row's inputs, each [T, ·] (gates null when absent).
template <typename T>
struct RowInputs {
  const T *q, *k, *v, *a, *b;

  RowInputs(const Tensor& q_, const Tensor& k_, const Tensor& v_, const Tensor& a_, const Tensor& b_, int64_t r,
            const ScanShape& s)
      : q(q_.data<T>() + r * s.length * s.features),
        k(k_.data<T>() + r * s.length * s.features),
        v(v_.data<T>() + r * s.length * s.values),
        a(a_.defined() ? a_.data<T>() + r * s.length * s.values : nullptr),
        b(b_.defined() ? b_.data<T>() + r * s.length * s.features : nullptr) {}
};

// S ← (a_t b_tᵀ) ⊙ S + v_t k_tᵀ for one step t; y_t = S q_t when y is not null.
template <typename T>
void scan_step(const RowInputs<T>& in, int64_t t, T* state, T* y, const ScanShape& s) {
  const T* k = in.k + t * s.features;
  const T* q = in.q + t * s.features;
  const T* v = in.v + t * s.values;
  const T* b = in.b ? in.b + t * s.features : nullptr;
  for (int64_t i = 0; i < s.values; ++i) {
    T* row = state + i * s.features;
    const T vi = v[i], ai = in.a ? in.a[t * s.values + i] : T(1);
    if (b) {
      for (int64_t j = 0; j < s.features; ++j) row[j] = ai * b[j] * row[j] + vi * k[j];
    } else if (in.a) {
      for (int64_t j = 0; j < s.features; ++j) row[j] = ai * row[j] + vi * k[j];
    } else {
      for (int64_t j = 0; j < s.features; ++j) row[j] += vi * k[j];
    }
    if (y) {
      T dot = T(0);
      for (int64_t j = 0; j < s.features; ++j) dot += row[j] * q[j];
      y[t * s.values + i] = dot;
    }
  }
}

template <typename T>
void forward_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a, const Tensor& b,
                   const Tensor& state, const Tensor& y, const ScanShape& s) {
  parallel_ranges(s.rows, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const RowInputs<T> in(q, k, v, a, b, r, s);
      T* st = state.data<T>() + r * s.state_size();
      T* yr = y.data<T>() + r * s.length * s.values;
      for (int64_t t = 0; t < s.length; ++t) scan_step(in, t, st, yr, s);
    }
  }, s.grain());
}

// One row's gradient outputs, each [T, ·] (null when not wanted).
template <typename T>
struct RowGrads {
  const T* dy;
  T *dq, *dk, *dv, *da, *db;
};

// The backward walk over t ∈ [t0, t1) of one chunk, from its states: S_{t−1} = states[t−t0],
// S_t = states[t−t0+1]. `u` carries U_{t1} (already excluding the gate of step t1) in and U_{t0} out.
template <typename T>
void backward_chunk(const RowInputs<T>& in, const RowGrads<T>& out, int64_t t0, int64_t t1, const T* states, T* u,
                    const ScanShape& s) {
  const int64_t m = s.features, n = s.values, size = s.state_size();
  for (int64_t t = t1 - 1; t >= t0; --t) {
    const T* before = states + (t - t0) * size;  // S_{t−1}
    const T* after = before + size;              // S_t
    const T *q = in.q + t * m, *k = in.k + t * m, *v = in.v + t * n, *g = out.dy + t * n;
    const T* b = in.b ? in.b + t * m : nullptr;
    const T* a = in.a ? in.a + t * n : nullptr;
    T *dq = out.dq + t * m, *dk = out.dk + t * m, *dv = out.dv + t * n;
    T* db = b ? out.db + t * m : nullptr;
    std::fill(dq, dq + m, T(0));
    std::fill(dk, dk + m, T(0));
    if (db) std::fill(db, db + m, T(0));
    for (int64_t i = 0; i < n; ++i) {
      T* ui = u + i * m;
      const T *si = after + i * m, *pi = before + i * m;
      const T gi = g[i], vi = v[i], ai = a ? a[i] : T(1);
      T dvi = T(0), dai = T(0);
      for (int64_t j = 0; j < m; ++j) {
        ui[j] += gi * q[j];  // U_t = g_t q_tᵀ + (carried part)
        dq[j] += si[j] * gi;
        dvi += ui[j] * k[j];
        dk[j] += ui[j] * vi;
      }
      if (a || b) {
        for (int64_t j = 0; j < m; ++j) {
          const T dg = ui[j] * pi[j];  // ∂L/∂G_t[i][j]
          dai += dg * (b ? b[j] : T(1));
          if (db) db[j] += dg * ai;
        }
      }
      dv[i] = dvi;
      if (a) out.da[t * n + i] = dai;
      // Carry into U_{t−1}: the gate of step t multiplies U_t.
      if (b) {
        for (int64_t j = 0; j < m; ++j) ui[j] *= ai * b[j];
      } else if (a) {
        for (int64_t j = 0; j < m; ++j) ui[j] *= ai;
      }
    }
  }
}

template <typename T>
void backward_row(const RowInputs<T>& in, const RowGrads<T>& out, std::vector<T>& boundaries, std::vector<T>& chunk,
                  std::vector<T>& u, const ScanShape& s) {
  const int64_t size = s.state_size(), chunks = (s.length + kChunk - 1) / kChunk;
  boundaries.resize(size_t(chunks * size));
  u.assign(size_t(size), T(0));  // first the running state: S before each chunk, from S_0 = 0
  for (int64_t c = 0; c < chunks; ++c) {
    std::copy(u.begin(), u.end(), boundaries.begin() + c * size);
    for (int64_t t = c * kChunk; t < std::min(s.length, (c + 1) * kChunk); ++t) scan_step<T>(in, t, u.data(), nullptr, s);
  }
  std::fill(u.begin(), u.end(), T(0));  // then U, from U_T's carried part = 0
  chunk.resize(size_t((kChunk + 1) * size));
  for (int64_t c = chunks - 1; c >= 0; --c) {
    const int64_t t0 = c * kChunk, t1 = std::min(s.length, t0 + kChunk);
    std::copy(boundaries.begin() + c * size, boundaries.begin() + (c + 1) * size, chunk.begin());
    for (int64_t t = t0; t < t1; ++t) {
      T* next = chunk.data() + (t - t0 + 1) * size;
      std::copy(next - size, next, next);
      scan_step<T>(in, t, next, nullptr, s);
    }
    backward_chunk(in, out, t0, t1, chunk.data(), u.data(), s);
  }
}

template <typename T>
void backward_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a, const Tensor& b,
                    const Tensor& dy, const Tensor& dq, const Tensor& dk, const Tensor& dv, const Tensor& da,
                    const Tensor& db, const ScanShape& s) {
  parallel_ranges(s.rows, [&](int64_t lo, int64_t hi) {
    std::vector<T> boundaries, chunk, u;  // reused by this thread's rows
    for (int64_t r = lo; r < hi; ++r) {
      const RowInputs<T> in(q, k, v, a, b, r, s);
      const int64_t qk = r * s.length * s.features, vo = r * s.length * s.values;
      const RowGrads<T> out{dy.data<T>() + vo,
                            dq.data<T>() + qk,
                            dk.data<T>() + qk,
                            dv.data<T>() + vo,
                            da.defined() ? da.data<T>() + vo : nullptr,
                            db.defined() ? db.data<T>() + qk : nullptr};
      backward_row(in, out, boundaries, chunk, u, s);
    }
  }, s.grain());
}

}  // namespace

void CpuBackend::gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                        const Tensor& b, const Tensor& state, const Tensor& y) {
  if (use_chunked_additive(a, b, q.size(1))) return additive_linear_attention(q, k, v, state, y);
  const ScanShape s(q, v);
  dispatch_floating(q.dtype(), [&](auto tag) { forward_typed<decltype(tag)>(q, k, v, a, b, state, y, s); });
}

void CpuBackend::gated_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                                 const Tensor& b, const Tensor& dy, const Tensor& dq,
                                                 const Tensor& dk, const Tensor& dv, const Tensor& da,
                                                 const Tensor& db) {
  if (use_chunked_additive(a, b, q.size(1))) return additive_linear_attention_backward(q, k, v, dy, dq, dk, dv);
  const ScanShape s(q, v);
  dispatch_floating(q.dtype(), [&](auto tag) { backward_typed<decltype(tag)>(q, k, v, a, b, dy, dq, dk, dv, da, db, s); });
}

}  // namespace attn::cpu
