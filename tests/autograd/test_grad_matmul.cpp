// Gradients of matmul and linear (autograd/ops_matmul.cpp): 2-D, batched, broadcast batch
// dims on either side, the 1-D cases, transposed operands; linear with and without bias on
// 1-D, 2-D and 3-D inputs, and its values against the composed matmul form; the fused
// linear_relu against relu(linear(...)).
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

Tensor product(const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }

}  // namespace

TEST_CASE("matmul of matrices, contiguous and transposed") {
  check_gradients(product, {leaf({2, 3}, 71), leaf({3, 4}, 72)});
  check_gradients(product, {transposed_leaf({2, 3}, 73), transposed_leaf({3, 4}, 74)});
  check_gradients(product, {strided_leaf({2, 3}, 75), leaf({3, 2}, 76)});
}

TEST_CASE("batched matmul with broadcast batch dims") {
  check_gradients(product, {leaf({2, 2, 3}, 77), leaf({2, 3, 2}, 78)});
  check_gradients(product, {leaf({2, 2, 3}, 79), leaf({3, 2}, 80)});              // shared right matrix
  check_gradients(product, {transposed_leaf({2, 2, 3}, 81), leaf({3, 2}, 82)});  // ... with a strided batch
  check_gradients(product, {leaf({2, 3}, 83), leaf({2, 3, 2}, 84)});              // shared left matrix
  check_gradients(product, {leaf({2, 1, 2, 3}, 85), leaf({3, 3, 2}, 86)});        // both broadcast
}

TEST_CASE("matmul with 1-D operands") {
  check_gradients(product, {leaf({3}, 87), leaf({3, 2}, 88)});
  check_gradients(product, {leaf({2, 3}, 89), leaf({3}, 90)});
  check_gradients(product, {leaf({3}, 91), leaf({3}, 92)});
  check_gradients(product, {leaf({3}, 93), leaf({2, 3, 2}, 94)});
  check_gradients(product, {leaf({2, 2, 3}, 95), leaf({3}, 96)});
}

TEST_CASE("linear with and without bias on inputs of any rank") {
  auto with_bias = [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); };
  auto without_bias = [](const std::vector<Tensor>& in) { return linear(in[0], in[1], Tensor()); };
  check_gradients(with_bias, {leaf({4, 3}, 101), leaf({2, 3}, 102), leaf({2}, 103)});
  check_gradients(with_bias, {leaf({2, 2, 3}, 104), leaf({2, 3}, 105), leaf({2}, 106)});
  check_gradients(with_bias, {leaf({3}, 107), leaf({2, 3}, 108), leaf({2}, 109)});
  check_gradients(with_bias, {transposed_leaf({2, 3, 3}, 110), transposed_leaf({2, 3}, 111), leaf({2}, 112)});
  check_gradients(without_bias, {strided_leaf({2, 3}, 113), leaf({4, 3}, 114)});
}

TEST_CASE("linear equals x @ W^T + b in value and gradient") {
  Tensor x = leaf({2, 2, 3}, 115), w = leaf({4, 3}, 116), b = leaf({4}, 117);
  Tensor fused = linear(x, w, b);
  Tensor composed = matmul(x, transpose(w, 0, 1)) + b;
  REQUIRE(fused.shape() == Shape{2, 2, 4});
  std::vector<double> f = values(fused), c = values(composed);
  for (size_t i = 0; i < f.size(); ++i) CHECK(f[i] == Approx(c[i]).epsilon(1e-12));
  Tensor weights = gradcheck_weights(fused.shape(), DType::Float64);
  backward(sum(fused * weights));
  std::vector<Tensor> fused_grads{grad(x), grad(w), grad(b)};
  for (Tensor t : {x, w, b}) zero_grad(t);
  backward(sum((matmul(x, transpose(w, 0, 1)) + b) * weights));
  std::vector<Tensor> composed_grads{grad(x), grad(w), grad(b)};
  for (int i = 0; i < 3; ++i) {
    std::vector<double> a = values(fused_grads[i]), e = values(composed_grads[i]);
    for (size_t k = 0; k < a.size(); ++k) CHECK(a[k] == Approx(e[k]).epsilon(1e-12));
  }
}

TEST_CASE("linear gradients only for the inputs that need them") {
  Tensor x = from_doubles({1, 2, 3}, {1, 3}, DType::Float64);
  Tensor w = leaf({2, 3}, 118);
  backward(sum(linear(x, w, Tensor())));
  CHECK(values(grad(w)) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK_FALSE(grad(x).defined());
}

TEST_CASE("linear rejects mismatched shapes and dtypes by name") {
  using Catch::Matchers::Contains;
  Tensor x = leaf({2, 3}, 119), w = leaf({4, 5}, 120), b = leaf({3}, 121);
  CHECK_THROWS_WITH(linear(x, w, Tensor()), Contains("[2, 3]") && Contains("[4, 5]"));
  CHECK_THROWS_WITH(linear(x, leaf({4, 3}, 122), b), Contains("bias [3]"));
  CHECK_THROWS_WITH(linear(ones({2, 3}), leaf({4, 3}, 123), Tensor()), Contains("float32") && Contains("float64"));
}

TEST_CASE("linear_relu gradchecks with and without bias on inputs of any rank") {
  auto with_bias = [](const std::vector<Tensor>& in) { return linear_relu(in[0], in[1], in[2]); };
  auto without_bias = [](const std::vector<Tensor>& in) { return linear_relu(in[0], in[1], Tensor()); };
  check_gradients(with_bias, {leaf({5, 3}, 201), leaf({4, 3}, 202), leaf({4}, 203)});
  check_gradients(with_bias, {leaf({2, 3, 3}, 204), transposed_leaf({4, 3}, 205), leaf({4}, 206)});
  check_gradients(with_bias, {leaf({3}, 207), leaf({4, 3}, 208), leaf({4}, 209)});
  check_gradients(without_bias, {strided_leaf({3, 3}, 210), leaf({4, 3}, 211)});
}

TEST_CASE("linear_relu equals relu(linear(x, W, b)) in value and gradient") {
  Tensor x = leaf({3, 4, 5}, 212), w = leaf({6, 5}, 213), b = leaf({6}, 214);
  auto fused = [](const std::vector<Tensor>& in) { return linear_relu(in[0], in[1], in[2]); };
  auto composed = [](const std::vector<Tensor>& in) { return relu(linear(in[0], in[1], in[2])); };
  const std::vector<Tensor> in{x, w, b};
  Tensor y = fused(in);
  REQUIRE(y.shape() == Shape{3, 4, 6});
  std::vector<double> f = values(y), c = values(composed(in));
  int zeros = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    CHECK(f[i] == Approx(c[i]).epsilon(1e-12));
    zeros += f[i] == 0.0;
  }
  CHECK(zeros > 0);  // the ReLU really cut something
  Tensor weights = gradcheck_weights(y.shape(), DType::Float64);
  std::vector<Tensor> a = weighted_gradients(fused, in, weights), e = weighted_gradients(composed, in, weights);
  for (int i = 0; i < 3; ++i) {
    std::vector<double> av = values(a[i]), ev = values(e[i]);
    for (size_t k = 0; k < av.size(); ++k) CHECK(av[k] == Approx(ev[k]).epsilon(1e-12));
  }
}

TEST_CASE("linear_relu gradients only for the inputs that need them") {
  Tensor x = from_doubles({1, -2, 3}, {1, 3}, DType::Float64);
  Tensor w = from_doubles({1, 1, 1, -1, 0, 0}, {2, 3}, DType::Float64);
  set_requires_grad(w);
  backward(sum(linear_relu(x, w, Tensor())));  // pre-activations 2 and -1: only the first row passes
  CHECK(values(grad(w)) == std::vector<double>{1, -2, 3, 0, 0, 0});
  CHECK_FALSE(grad(x).defined());
}
