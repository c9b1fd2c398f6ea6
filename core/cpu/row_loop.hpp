// The loop of the CPU kernels that work row by row over the last dim of a contiguous
// [rows, cols] tensor (softmax, layer norm, cross entropy): rows are independent, so they are
// spread over the OpenMP threads, and each row is handled through Eigen array maps, whose
// exp/log/sum are vectorized (AVX-512 with -march=native).
#pragma once
#include <omp.h>

#include <cstdint>
#include <limits>

#include "core/cpu/eigen.hpp"

namespace attn::cpu {

template <typename T> using RowIn = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T> using RowOut = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// Sets to 0 the values of y[0, n) below the smallest normal number; y ≥ 0 here (the results
// of an exp). Eigen's vectorised exp clamps its argument at about −88.4 (float) and returns a
// denormal for anything below, −∞ among them (seen on an AVX2-only CPU); after it this makes
// exp(−∞) exactly 0, so masked attention keys get no weight. A plain loop the compiler
// vectorises (a select inside the Eigen expression made the softmax 5.7× slower: its exp was
// no longer vectorised).
template <typename T>
void flush_denormals(T* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = y[j] < std::numeric_limits<T>::min() ? T(0) : y[j];
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
