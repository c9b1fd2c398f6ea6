// The loop of the CPU kernels that work row by row over the last dim of a contiguous
// [rows, cols] tensor (softmax, layer norm, cross entropy): rows are independent, so they are
// spread over the OpenMP threads, and each row is handled through Eigen array maps, whose
// exp/log/sum are vectorized (AVX-512 with -march=native).
#pragma once
#include <omp.h>

#include <Eigen/Core>
#include <cstdint>
#include <limits>

// GCC 12 reports the deliberately undefined lanes of _mm512_undefined_*() inside Eigen's
// AVX-512 packet math as "may be used uninitialized": a known false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace attn::cpu {

template <typename T> using RowIn = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T> using RowOut = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// exp of an Eigen array expression with exp(−∞) exactly 0. Eigen's vectorised exp clamps its
// argument at about −88.4 and returns the denormal 2.9e−39 for anything below (seen on an
// AVX2-only CPU), which would give masked attention keys a weight and exp(−∞) a value.
template <typename Derived>
auto exact_exp(const Eigen::ArrayBase<Derived>& x) {
  using T = typename Derived::Scalar;
  return (x == -std::numeric_limits<T>::infinity()).select(T(0), x.exp());
}

// Below this many elements in all, forking threads costs more than it saves.
inline constexpr int64_t kRowParallelGrain = 16384;

// Calls fn(r) for every row r in [0, rows), in parallel when the work is large enough.
template <typename Fn>
void for_each_row(int64_t rows, int64_t cols, Fn&& fn) {
  const bool parallel = rows > 1 && rows * cols >= kRowParallelGrain && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) fn(r);
}

// sum_{j < n} term(j) for a float64 term(j), accumulated in float64 over 8 independent lanes:
// float64-accurate, and the fixed-width inner loop vectorizes (Eigen's cast<double>() does not).
template <typename Term>
double sum_in_float64(int64_t n, Term&& term) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += term(j + l);
  double total = 0.0;
  for (; j < n; ++j) total += term(j);
  for (double lane : lanes) total += lane;
  return total;
}

}  // namespace attn::cpu
