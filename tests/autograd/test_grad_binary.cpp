// Gradients of the binary ops, their scalar forms, where and masked_fill
// (autograd/ops_binary.cpp): broadcasting in every direction, non-contiguous operands,
// float32 agreement, and the tie rule of maximum/minimum.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

using BinaryFn = std::function<Tensor(const Tensor&, const Tensor&)>;

// Same shapes, row broadcast, column broadcast, scalar operand, and strided operands.
void check_binary(const BinaryFn& op, double low = -1, double high = 1) {
  auto f = [op](const std::vector<Tensor>& in) { return op(in[0], in[1]); };
  check_gradients(f, {leaf({2, 3}, 21, low, high), leaf({2, 3}, 22, low, high)});
  check_gradients(f, {leaf({2, 3}, 23, low, high), leaf({3}, 24, low, high)});
  check_gradients(f, {leaf({2, 1}, 25, low, high), leaf({2, 3}, 26, low, high)});
  check_gradients(f, {leaf({}, 27, low, high), leaf({2, 2}, 28, low, high)});
  check_gradients(f, {transposed_leaf({3, 2}, 29, low, high), strided_leaf({3, 2}, 30, low, high)});
}

}  // namespace

TEST_CASE("arithmetic with broadcasting") {
  check_binary([](const Tensor& a, const Tensor& b) { return a + b; });
  check_binary([](const Tensor& a, const Tensor& b) { return a - b; });
  check_binary([](const Tensor& a, const Tensor& b) { return a * b; });
  check_binary([](const Tensor& a, const Tensor& b) { return a / b; }, 0.5, 2.0);
}

TEST_CASE("maximum and minimum with broadcasting") {
  check_binary([](const Tensor& a, const Tensor& b) { return maximum(a, b); });
  check_binary([](const Tensor& a, const Tensor& b) { return minimum(a, b); });
}

TEST_CASE("maximum and minimum split the gradient evenly on ties") {
  Tensor a = from_doubles({1, 2, 3}, {3}, DType::Float64);
  Tensor b = from_doubles({3, 2, 1}, {3}, DType::Float64);
  set_requires_grad(a);
  set_requires_grad(b);
  backward(sum(maximum(a, b) + minimum(a, b) * 10.0));
  CHECK(values(grad(a)) == std::vector<double>{10, 5.5, 1});
  CHECK(values(grad(b)) == std::vector<double>{1, 5.5, 10});
}

TEST_CASE("scalar forms") {
  auto check = [](std::function<Tensor(const Tensor&)> op, double low = -1, double high = 1) {
    auto f = [op](const std::vector<Tensor>& in) { return op(in[0]); };
    check_gradients(f, {leaf({2, 3}, 31, low, high)});
    check_gradients(f, {transposed_leaf({2, 3}, 32, low, high)});
  };
  check([](const Tensor& x) { return x + 1.5; });
  check([](const Tensor& x) { return x - 1.5; });
  check([](const Tensor& x) { return x * -2.5; });
  check([](const Tensor& x) { return x / 4.0; });
  check([](const Tensor& x) { return 1.5 + x; });
  check([](const Tensor& x) { return 1.5 - x; });
  check([](const Tensor& x) { return -2.5 * x; });
  check([](const Tensor& x) { return 3.0 / x; }, 0.5, 2);
  check([](const Tensor& x) { return -x; });
}

TEST_CASE("where routes the gradient by the condition, with broadcasting") {
  Tensor cond = ops::gt(from_doubles({1, -1, 1, -1, -1, 1}, {2, 3}, DType::Float64), 0.0);
  auto f = [cond](const std::vector<Tensor>& in) { return where(cond, in[0], in[1]); };
  check_gradients(f, {leaf({2, 3}, 33), leaf({3}, 34)});
  check_gradients(f, {transposed_leaf({2, 3}, 35), leaf({2, 1}, 36)});

  Tensor a = leaf({2, 3}, 37), b = leaf({2, 3}, 38);
  backward(sum(where(cond, a, b)));
  CHECK(values(grad(a)) == std::vector<double>{1, 0, 1, 0, 0, 1});
  CHECK(values(grad(b)) == std::vector<double>{0, 1, 0, 1, 1, 0});
}

TEST_CASE("masked_fill passes no gradient to filled positions") {
  Tensor mask = ops::gt(from_doubles({1, -1, -1}, {3}, DType::Float64), 0.0);  // broadcast over rows
  auto f = [mask](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, -3.0); };
  check_gradients(f, {leaf({2, 3}, 39)});
  check_gradients(f, {transposed_leaf({2, 3}, 40)});
  Tensor x = leaf({2, 3}, 41);
  backward(sum(masked_fill(x, mask, 5.0)));
  CHECK(values(grad(x)) == std::vector<double>{0, 1, 1, 0, 1, 1});
}
