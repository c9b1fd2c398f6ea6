// Gradients of the element-wise unary ops (autograd/ops_unary.cpp): gradcheck in float64
// on contiguous and non-contiguous inputs, and float32 agreement. Inputs stay inside each
// op's domain and away from kinks (0 for abs/relu, the clamp bounds).
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

using UnaryFn = std::function<Tensor(const Tensor&)>;

void check_unary(const UnaryFn& op, double low, double high) {
  auto f = [op](const std::vector<Tensor>& in) { return op(in[0]); };
  check_gradients(f, {leaf({2, 3}, 11, low, high)});
  check_gradients(f, {transposed_leaf({3, 2}, 12, low, high)});
}

// Values in [0.2, 1.2) with random signs: away from 0.
Tensor away_from_zero(const Shape& shape, uint64_t seed) {
  Tensor magnitude = leaf(shape, seed, 0.2, 1.2);
  Tensor sign = ops::sub(ops::mul(bernoulli(shape, 0.5, DType::Float64), 2.0), 1.0);
  Tensor t = ops::mul(detach(magnitude), sign);
  set_requires_grad(t);
  return t;
}

}  // namespace

TEST_CASE("smooth unary ops on all reals") {
  check_unary([](const Tensor& x) { return neg(x); }, -2, 2);
  check_unary([](const Tensor& x) { return exp(x); }, -2, 2);
  check_unary([](const Tensor& x) { return gelu(x); }, -3, 3);
  check_unary([](const Tensor& x) { return sigmoid(x); }, -3, 3);
  check_unary([](const Tensor& x) { return tanh(x); }, -2, 2);
  check_unary([](const Tensor& x) { return sin(x); }, -3, 3);
  check_unary([](const Tensor& x) { return cos(x); }, -3, 3);
  check_unary([](const Tensor& x) { return pow(x, 2.0); }, -2, 2);
  check_unary([](const Tensor& x) { return pow(x, 3.0); }, -2, 2);
}

TEST_CASE("unary ops on positive inputs") {
  check_unary([](const Tensor& x) { return log(x); }, 0.5, 2);
  check_unary([](const Tensor& x) { return sqrt(x); }, 0.5, 2);
  check_unary([](const Tensor& x) { return rsqrt(x); }, 0.5, 2);
  check_unary([](const Tensor& x) { return pow(x, -0.5); }, 0.5, 2);
  check_unary([](const Tensor& x) { return pow(x, 1.5); }, 0.5, 2);
}

TEST_CASE("piecewise unary ops away from their kinks") {
  for (const UnaryFn& op : std::vector<UnaryFn>{[](const Tensor& x) { return abs(x); },
                                                [](const Tensor& x) { return relu(x); },
                                                [](const Tensor& x) { return elu(x); },
                                                [](const Tensor& x) { return elu(x, 0.5); }}) {
    auto f = [op](const std::vector<Tensor>& in) { return op(in[0]); };
    check_gradients(f, {away_from_zero({3, 4}, 13)});
  }
  // clamp to [-0.5, 0.5]: inputs on both sides of and between the bounds, none near them.
  Tensor x = from_doubles({-1.2, -0.8, -0.3, 0.1, 0.4, 0.9}, {2, 3}, DType::Float64);
  set_requires_grad(x);
  check_gradients([](const std::vector<Tensor>& in) { return clamp(in[0], -0.5, 0.5); }, {x});
  zero_grad(x);
  backward(sum(clamp(x, -0.5, 0.5)));
  CHECK(values(grad(x)) == std::vector<double>{0, 0, 1, 1, 1, 0});
}

TEST_CASE("relu and abs gradients have the expected values") {
  Tensor x = from_doubles({-2, -0.5, 0.5, 3}, {4}, DType::Float64);
  set_requires_grad(x);
  backward(sum(relu(x) + abs(x) * 10.0));
  CHECK(values(grad(x)) == std::vector<double>{-10, -10, 11, 11});
}
