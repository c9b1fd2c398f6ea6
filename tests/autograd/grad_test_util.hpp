// Shared by the gradient tests (docs/design.md §7: gradients against finite differences):
// random float64 leaves (contiguous or deliberately strided), and check_gradients(), which
// runs gradcheck in float64 and then checks that the same computation in float32 gives the
// same gradients within float32 tolerance.
#pragma once
#include <catch.hpp>

#include <cmath>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "core/rng.hpp"

namespace attn::testing {

// A float64 leaf requiring grad, uniform in [low, high).
inline Tensor leaf(const Shape& shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Generator gen(seed);
  Tensor t = uniform(shape, low, high, DType::Float64, &gen);
  set_requires_grad(t);
  return t;
}

// A non-contiguous float64 leaf of `shape` (>= 2-D): the transpose of a tensor stored with
// the last two dims swapped.
inline Tensor transposed_leaf(const Shape& shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Shape stored = shape;
  std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
  Generator gen(seed);
  Tensor t = uniform(stored, low, high, DType::Float64, &gen).transpose(-1, -2);
  set_requires_grad(t);
  return t;
}

// A non-contiguous float64 leaf of `shape`: every other element along the last dim.
inline Tensor strided_leaf(const Shape& shape, uint64_t seed, double low = -1.0, double high = 1.0) {
  Shape stored = shape;
  stored[stored.size() - 1] *= 2;
  Generator gen(seed);
  Tensor t = uniform(stored, low, high, DType::Float64, &gen).slice(-1, 0, stored.back(), 2);
  set_requires_grad(t);
  return t;
}

// float32 copies of the inputs (non-float inputs, e.g. indices, are passed through).
inline std::vector<Tensor> as_float32(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  for (const Tensor& x : inputs) {
    if (x.dtype() != DType::Float64) {
      out.push_back(x);
      continue;
    }
    Tensor y = detach(x).to(DType::Float32);
    if (requires_grad(x)) set_requires_grad(y);
    out.push_back(y);
  }
  return out;
}

inline void check_float32_agrees(const GradcheckFn& f, const std::vector<Tensor>& inputs, double tolerance) {
  Tensor out = [&] {
    NoGradGuard no_grad;
    return f(inputs);
  }();
  Tensor weights = gradcheck_weights(out.shape(), DType::Float64);
  std::vector<Tensor> grads64 = weighted_gradients(f, inputs, weights);
  std::vector<Tensor> grads32 = weighted_gradients(f, as_float32(inputs), weights);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!grads64[i].defined()) continue;
    REQUIRE(grads32[i].dtype() == DType::Float32);
    std::vector<double> a = grads64[i].to_vector(), b = grads32[i].to_vector();
    REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      INFO("float32 vs float64 gradient of input " << i << ", element " << k);
      REQUIRE(std::abs(a[k] - b[k]) <= tolerance * (1.0 + std::abs(a[k])));
    }
  }
}

// gradcheck in float64 (every element of every input) and float32 agreement.
inline void check_gradients(const GradcheckFn& f, const std::vector<Tensor>& inputs, GradcheckOptions options = {},
                            double float32_tolerance = 1e-4) {
  GradcheckResult result = gradcheck(f, inputs, options);
  INFO(result.message);
  REQUIRE(result.ok);
  check_float32_agrees(f, inputs, float32_tolerance);
}

// A fused op and the same computation written with plain ops, each applied to its own copy of
// the inputs (`fused_inputs`, `plain_inputs`): equal values, and equal gradients of every input
// for the output weights `g`.
template <typename Fused, typename Plain>
void check_same_as_plain_ops(Fused fused, Plain plain, const std::vector<Tensor>& fused_inputs,
                             const std::vector<Tensor>& plain_inputs, const Tensor& g, double tolerance = 1e-12) {
  const Tensor a = fused(fused_inputs), b = plain(plain_inputs);
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> va = a.to_vector(), vb = b.to_vector();
  for (size_t i = 0; i < va.size(); ++i) REQUIRE(std::abs(va[i] - vb[i]) <= tolerance);
  backward(a, detach(g));
  backward(b, detach(g));
  for (size_t i = 0; i < fused_inputs.size(); ++i) {
    INFO("gradient of input " << i);
    const std::vector<double> ga = grad(fused_inputs[i]).to_vector(), gb = grad(plain_inputs[i]).to_vector();
    REQUIRE(ga.size() == gb.size());
    for (size_t k = 0; k < ga.size(); ++k) REQUIRE(std::abs(ga[k] - gb[k]) <= tolerance);
  }
}

// The values of a tensor, for comparing with expected literals.
inline std::vector<double> values(const Tensor& t) { return t.to_vector(); }

}  // namespace attn::testing
