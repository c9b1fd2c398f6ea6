// Test data shared by the kernel tests (matmul, softmax, layer norm, cross entropy): random
// tensors from a fixed std::mt19937_64 seed (independent of the engine's own RNG under test)
// and element-wise comparison against float64 reference values.
#pragma once
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/tensor.hpp"

namespace attn::test {

inline Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed, double low = -1.0, double high = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> values(size_t(shape.numel()));
  for (double& v : values) v = dist(rng);
  return from_doubles(values, shape, dtype);
}

// Largest |actual - expected| over all elements (shapes must match).
inline double max_abs_diff(const std::vector<double>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) worst = std::max(worst, std::abs(actual[i] - expected[i]));
  return worst;
}

inline void require_close(const Tensor& actual, const std::vector<double>& expected, double tolerance) {
  INFO("tensor of shape " << actual.shape().str() << ", " << dtype_name(actual.dtype()));
  REQUIRE(max_abs_diff(actual.to_vector(), expected) <= tolerance);
}

// Tolerance for comparing a result of `dtype` with its float64 reference at unit scale.
inline double tolerance_for(DType dtype, double float32_tolerance = 2e-5) {
  return dtype == DType::Float64 ? 1e-11 : float32_tolerance;
}

}  // namespace attn::test
