// CPU delta rule (Schlag, Irie & Schmidhuber 2021, Eq. 21–24; docs/models.md §5.5). Per row r
// (a batch × head pair), fast weights W ∈ ℝ^{N×M}, W_0 = 0:
//
//   v̄_t = W_{t−1} k_t            what W returns for k_t before the write
//   u_t = β_t (v_t − v̄_t)        the write: move W's answer towards v_t by β_t
//   W_t = W_{t−1} + u_t k_tᵀ,     y_t = W_t q_t
//
// Backward (§5.5), with g_t = ∂L/∂y_t and G the gradient reaching W_t from later steps:
//
//   G ← G + g_t q_tᵀ                          (∂L/∂W_t)
//   ∂L/∂q_t = W_tᵀ g_t     ∂L/∂u_t = G k_t     ∂L/∂v_t = β_t ∂L/∂u_t
//   ∂L/∂β_t = (v_t − v̄_t)ᵀ ∂L/∂u_t           ∂L/∂v̄_t = −β_t ∂L/∂u_t
//   ∂L/∂k_t = Gᵀ u_t + W_{t−1}ᵀ ∂L/∂v̄_t
//   G ← G + ∂L/∂v̄_t k_tᵀ                      (∂L/∂W_{t−1})
//
// As the gated scan (gated_linear_attention.cpp), the backward reruns the forward storing W at
// chunk boundaries and recomputes each chunk's states when it gets there: per thread
// (T/C + C + 1)·N·M values, never B×H×T×N×M. Rows are spread over the OpenMP threads.
#include <algorithm>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {
namespace {

constexpr int64_t kChunk = 64;

struct DeltaShape {
  int64_t rows, length, features, values;  // R, T, M, N
  DeltaShape(const Tensor& q, const Tensor& v) : rows(q.size(0)), length(q.size(1)), features(q.size(2)), values(v.size(2)) {}
  int64_t state_size() const { return values * features; }
  int64_t grain() const { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, 2 * length * state_size())); }
};

template <typename T>
struct DeltaRow {
  const T *q, *k, *v, *beta;
  DeltaRow(const Tensor& q_, const Tensor& k_, const Tensor& v_, const Tensor& beta_, int64_t r, const DeltaShape& s)
      : q(q_.data<T>() + r * s.length * s.features),
        k(k_.data<T>() + r * s.length * s.features),
        v(v_.data<T>() + r * s.length * s.values),
        beta(beta_.data<T>() + r * s.length) {}
};

// One write: W ← W + u kᵀ with u = β (v − W k); u (N values) is returned through `u`, and
// y_t = W q when y is not null.
template <typename T>
void delta_step(const DeltaRow<T>& in, int64_t t, T* w, T* u, T* y, const DeltaShape& s) {
  const int64_t m = s.features;
  const T *k = in.k + t * m, *q = in.q + t * m, *v = in.v + t * s.values;
  const T beta = in.beta[t];
  for (int64_t i = 0; i < s.values; ++i) {
    T* row = w + i * m;
    T recalled = T(0);
    for (int64_t j = 0; j < m; ++j) recalled += row[j] * k[j];
    const T write = beta * (v[i] - recalled);
    u[i] = write;
    for (int64_t j = 0; j < m; ++j) row[j] += write * k[j];
    if (y) {
      T dot = T(0);
      for (int64_t j = 0; j < m; ++j) dot += row[j] * q[j];
      y[t * s.values + i] = dot;
    }
  }
}

template <typename T>
void forward_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& state,
                   const Tensor& y, const DeltaShape& s) {
  parallel_ranges(s.rows, [&](int64_t lo, int64_t hi) {
    std::vector<T> u(static_cast<size_t>(s.values));
    for (int64_t r = lo; r < hi; ++r) {
      const DeltaRow<T> in(q, k, v, beta, r, s);
      T* w = state.data<T>() + r * s.state_size();
      for (int64_t t = 0; t < s.length; ++t) delta_step(in, t, w, u.data(), y.data<T>() + r * s.length * s.values, s);
    }
  }, s.grain());
}

template <typename T>
struct DeltaGrads {
  const T* dy;
  T *dq, *dk, *dv, *dbeta;
};

// Walks t ∈ [t1 − 1, t0] backwards. states[τ] = W_{t0+τ−1} (τ = 0: before the chunk); writes[τ]
// = u_{t0+τ}; g carries G in and out.
template <typename T>
void backward_chunk(const DeltaRow<T>& in, const DeltaGrads<T>& out, int64_t t0, int64_t t1, const T* states,
                    const T* writes, T* g, const DeltaShape& s) {
  const int64_t m = s.features, n = s.values, size = s.state_size();
  std::vector<T> du(static_cast<size_t>(n));
  for (int64_t t = t1 - 1; t >= t0; --t) {
    const T* before = states + (t - t0) * size;  // W_{t−1}
    const T* after = before + size;              // W_t
    const T* u = writes + (t - t0) * n;
    const T *q = in.q + t * m, *k = in.k + t * m, *v = in.v + t * n, *gy = out.dy + t * n;
    const T beta = in.beta[t];
    T *dq = out.dq + t * m, *dk = out.dk + t * m, *dv = out.dv + t * n;
    std::fill(dq, dq + m, T(0));
    std::fill(dk, dk + m, T(0));
    T dbeta = T(0);
    for (int64_t i = 0; i < n; ++i) {  // G += g qᵀ; dq = W_tᵀ g; du = G k; dk += Gᵀ u
      T* gi = g + i * m;
      const T* wi = after + i * m;
      T dui = T(0);
      for (int64_t j = 0; j < m; ++j) {
        gi[j] += gy[i] * q[j];
        dq[j] += wi[j] * gy[i];
        dui += gi[j] * k[j];
        dk[j] += gi[j] * u[i];
      }
      du[size_t(i)] = dui;
      dv[i] = beta * dui;
      // v − v̄ = u / β when β ≠ 0; recomputed from W_{t−1} to stay exact for any β.
      T recalled = T(0);
      for (int64_t j = 0; j < m; ++j) recalled += before[i * m + j] * k[j];
      dbeta += (v[i] - recalled) * dui;
    }
    for (int64_t i = 0; i < n; ++i) {  // dk += W_{t−1}ᵀ dv̄, G += dv̄ kᵀ with dv̄ = −β du
      const T dvbar = -beta * du[size_t(i)];
      const T* pi = before + i * m;
      T* gi = g + i * m;
      for (int64_t j = 0; j < m; ++j) {
        dk[j] += pi[j] * dvbar;
        gi[j] += dvbar * k[j];
      }
    }
    out.dbeta[t] = dbeta;
  }
}

template <typename T>
void backward_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& dy,
                    const Tensor& dq, const Tensor& dk, const Tensor& dv, const Tensor& dbeta, const DeltaShape& s) {
  parallel_ranges(s.rows, [&](int64_t lo, int64_t hi) {
    const int64_t size = s.state_size(), chunks = (s.length + kChunk - 1) / kChunk;
    std::vector<T> boundaries(static_cast<size_t>(chunks * size)), states(static_cast<size_t>((kChunk + 1) * size)),
        writes(static_cast<size_t>(kChunk * s.values)), g(static_cast<size_t>(size));
    for (int64_t r = lo; r < hi; ++r) {
      const DeltaRow<T> in(q, k, v, beta, r, s);
      const int64_t qk = r * s.length * s.features, vo = r * s.length * s.values;
      const DeltaGrads<T> out{dy.data<T>() + vo, dq.data<T>() + qk, dk.data<T>() + qk, dv.data<T>() + vo,
                              dbeta.data<T>() + r * s.length};
      std::fill(g.begin(), g.end(), T(0));  // first the running W, from W_0 = 0
      for (int64_t c = 0; c < chunks; ++c) {
        std::copy(g.begin(), g.end(), boundaries.begin() + c * size);
        for (int64_t t = c * kChunk; t < std::min(s.length, (c + 1) * kChunk); ++t)
          delta_step<T>(in, t, g.data(), writes.data(), nullptr, s);
      }
      std::fill(g.begin(), g.end(), T(0));  // then G
      for (int64_t c = chunks - 1; c >= 0; --c) {
        const int64_t t0 = c * kChunk, t1 = std::min(s.length, t0 + kChunk);
        std::copy(boundaries.begin() + c * size, boundaries.begin() + (c + 1) * size, states.begin());
        for (int64_t t = t0; t < t1; ++t) {
          T* next = states.data() + (t - t0 + 1) * size;
          std::copy(next - size, next, next);
          delta_step<T>(in, t, next, writes.data() + (t - t0) * s.values, nullptr, s);
        }
        backward_chunk(in, out, t0, t1, states.data(), writes.data(), g.data(), s);
      }
    }
  }, s.grain());
}

}  // namespace

void CpuBackend::delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                            const Tensor& state, const Tensor& y) {
  const DeltaShape s(q, v);
  dispatch_floating(q.dtype(), [&](auto tag) { forward_typed<decltype(tag)>(q, k, v, beta, state, y, s); });
}

void CpuBackend::delta_rule_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                     const Tensor& dy, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                     const Tensor& dbeta) {
  const DeltaShape s(q, v);
  dispatch_floating(q.dtype(),
                    [&](auto tag) { backward_typed<decltype(tag)>(q, k, v, beta, dy, dq, dk, dv, dbeta, s); });
}

}  // namespace attn::cpu
