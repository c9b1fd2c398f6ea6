// The loop every CPU element-wise kernel runs on: N operands sharing one iteration shape,
// each with its own strides (0 for broadcast dims). Dims that are contiguous for all
// operands are merged first, so contiguous tensors become one flat row that the compiler
// vectorizes; large iteration spaces are split into equal flat ranges over OpenMP threads
// (small ones stay on the calling thread: below kParallelGrain elements the fork costs
// more than it saves).
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "core/tensor.hpp"

namespace attn::cpu {

inline constexpr int64_t kParallelGrain = 32768;

// Number of OpenMP threads worth using for `work` elements (1 when already inside a parallel region).
inline int threads_for(int64_t work, int64_t grain = kParallelGrain) {
  if (omp_in_parallel() || work < 2 * grain) return 1;
  return int(std::min<int64_t>(omp_get_max_threads(), work / grain));
}

// Strides of t in bytes, for the byte-addressed loops below.
inline Shape byte_strides(const Tensor& t) {
  Shape s = t.strides();
  for (int64_t& v : s) v *= int64_t(dtype_size(t.dtype()));
  return s;
}

// Runs range(lo, hi) over [0, total), split into contiguous chunks across threads_for(total) threads.
template <typename RangeFn>
void parallel_ranges(int64_t total, RangeFn&& range, int64_t grain = kParallelGrain) {
  int nthreads = threads_for(total, grain);
  if (nthreads <= 1) {
    if (total > 0) range(int64_t(0), total);
    return;
  }
#pragma omp parallel num_threads(nthreads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t lo = total * t / nt, hi = total * (t + 1) / nt;
    if (lo < hi) range(lo, hi);
  }
}

template <size_t N>
struct StridedOperands {
  Shape shape;                    // iteration shape after merging dims (at least 1 dim)
  std::array<Shape, N> strides;   // bytes
  std::array<char*, N> base;
};

// Drops size-1 dims and merges neighbours that are contiguous for every operand.
template <size_t N>
StridedOperands<N> merge_dims(const Shape& shape, const std::array<char*, N>& base, const std::array<Shape, N>& strides) {
  StridedOperands<N> m;
  m.base = base;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = m.shape.size() > 0;
    for (size_t k = 0; k < N && mergeable; ++k)
      mergeable = m.strides[k].back() == strides[k][d] * shape[d];
    if (mergeable) {
      m.shape[m.shape.size() - 1] *= shape[d];
      for (size_t k = 0; k < N; ++k) m.strides[k][m.shape.size() - 1] = strides[k][d];
    } else {
      m.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) m.strides[k].push_back(strides[k][d]);
    }
  }
  if (m.shape.empty()) {  // a single element
    m.shape.push_back(1);
    for (size_t k = 0; k < N; ++k) m.strides[k].push_back(0);
  }
  return m;
}

// Calls row(ptrs, inner_strides, n) on runs of n elements along the innermost merged dim,
// where ptrs[k] points at operand k's first element of the run and inner_strides[k] is its
// byte stride along the run. Every element of `shape` is visited exactly once.
template <size_t N, typename RowFn>
void for_each_row(const Shape& shape, const std::array<char*, N>& base, const std::array<Shape, N>& strides, RowFn&& row) {
  int64_t total = shape.numel();
  if (total == 0) return;
  const StridedOperands<N> m = merge_dims<N>(shape, base, strides);
  const int nd = m.shape.size(), last = nd - 1;
  const int64_t inner = m.shape[last];
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = m.strides[k][last];

  parallel_ranges(total, [&](int64_t lo, int64_t hi) {
    Shape index = Shape::filled(nd, 0);
    int64_t rem = lo;
    for (int d = last; d >= 0; --d) {
      index[d] = rem % m.shape[d];
      rem /= m.shape[d];
    }
    std::array<char*, N> ptrs = m.base;
    for (size_t k = 0; k < N; ++k)
      for (int d = 0; d < nd; ++d) ptrs[k] += index[d] * m.strides[k][d];
    while (lo < hi) {
      int64_t n = std::min(inner - index[last], hi - lo);
      row(ptrs, inner_strides, n);
      lo += n;
      // Advance the multi-index by n (to the start of the next row, or the end of the range).
      index[last] += n;
      for (size_t k = 0; k < N; ++k) ptrs[k] += n * inner_strides[k];
      for (int d = last; d > 0 && index[d] == m.shape[d]; --d) {
        for (size_t k = 0; k < N; ++k) ptrs[k] += m.strides[k][d - 1] - m.shape[d] * m.strides[k][d];
        index[d] = 0;
        ++index[d - 1];
      }
    }
  });
}

// Typed element-wise map over tensors of one shape (inputs already expanded to it):
//   map_elements<Out, In...>(f, out, {&in...})   sets   out[i] = f(in[i]...).
// Contiguous runs take a unit-stride loop the compiler vectorizes.
template <typename Out, typename... In, typename F, size_t N, size_t... I>
void map_row(F& f, const std::array<char*, N>& p, const std::array<int64_t, N>& s, int64_t n, std::index_sequence<I...>) {
  Out* o = reinterpret_cast<Out*>(p[0]);
  if (s[0] == int64_t(sizeof(Out)) && ((s[I + 1] == int64_t(sizeof(In))) && ...)) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(reinterpret_cast<const In*>(p[I + 1])[i]...);
  } else {
    const int64_t so = s[0] / int64_t(sizeof(Out));
    [[maybe_unused]] const std::array<int64_t, N> st{so, (s[I + 1] / int64_t(sizeof(In)))...};
    for (int64_t i = 0; i < n; ++i) o[i * so] = f(reinterpret_cast<const In*>(p[I + 1])[i * st[I + 1]]...);
  }
}

template <typename Out, typename... In, typename F>
void map_elements(F&& f, const Tensor& out, const std::array<const Tensor*, sizeof...(In)>& in) {
  constexpr size_t N = sizeof...(In) + 1;
  std::array<char*, N> base{static_cast<char*>(out.raw_data())};
  std::array<Shape, N> strides{byte_strides(out)};
  for (size_t k = 0; k < N - 1; ++k) {
    base[k + 1] = static_cast<char*>(in[k]->raw_data());
    strides[k + 1] = byte_strides(*in[k]);
  }
  for_each_row<N>(out.shape(), base, strides, [&](const std::array<char*, N>& p, const std::array<int64_t, N>& s, int64_t n) {
    map_row<Out, In...>(f, p, s, n, std::index_sequence_for<In...>{});
  });
}

}  // namespace attn::cpu
