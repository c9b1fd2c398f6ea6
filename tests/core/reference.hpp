// Test helpers shared by the core tests: seeded random inputs (contiguous or as strided
// views), and element-wise comparison against plain float64 reference loops.
#pragma once
#include <catch.hpp>

#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn::test {

// Uniform values in [low, high) with the given shape; `layout` picks how they are stored:
// 0 contiguous, 1 a transposed view (last two dims swapped), 2 a slice of a wider tensor.
inline Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed, int layout = 0, double low = -2,
                            double high = 2) {
  Generator gen(seed);
  if (layout == 1 && shape.size() >= 2) {
    Shape swapped = shape;
    std::swap(swapped[shape.size() - 1], swapped[shape.size() - 2]);
    return uniform(swapped, low, high, dtype, &gen).transpose(-1, -2);
  }
  if (layout == 2 && shape.size() >= 1) {
    Shape wider = shape;
    wider[shape.size() - 1] = 2 * shape.back() + 1;
    return uniform(wider, low, high, dtype, &gen).slice(-1, 1, wider.back(), 2);
  }
  return uniform(shape, low, high, dtype, &gen);
}

// The values of t broadcast to `shape`, in row-major order.
inline std::vector<double> values_as(const Tensor& t, const Shape& shape) { return t.expand(shape).to_vector(); }

inline double tolerance_for(DType dtype) { return dtype == DType::Float64 ? 1e-12 : 2e-6; }

// Every element agrees within tol (relative to max(1, |expected|)); reports the first that does not.
inline void check_all_close(const std::vector<double>& actual, const std::vector<double>& expected, double tol) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double scale = std::max(1.0, std::abs(expected[i]));
    const bool both_nan = std::isnan(actual[i]) && std::isnan(expected[i]);
    const bool same_inf = std::isinf(expected[i]) && actual[i] == expected[i];
    if (!(both_nan || same_inf || std::abs(actual[i] - expected[i]) <= tol * scale)) {
      INFO("element " << i << ": got " << actual[i] << ", expected " << expected[i]);
      CHECK(false);
      return;
    }
  }
}

}  // namespace attn::test
