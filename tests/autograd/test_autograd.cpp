// The tape and the backward engine (autograd/autograd.cpp, autograd/engine.cpp):
// accumulation, reuse of leaves and intermediates, broadcasting, NoGradGuard, detach, the
// graph being freed, seeds, multi-output nodes and clear errors on bad usage.
#include <catch.hpp>

#include "autograd/ops.hpp"
#include "grad_test_util.hpp"

using namespace attn;
using attn::testing::values;
using Catch::Matchers::Contains;

namespace {

Tensor leaf_from(const std::vector<double>& v, const Shape& shape) {
  Tensor t = from_doubles(v, shape, DType::Float64);
  set_requires_grad(t);
  return t;
}

}  // namespace

TEST_CASE("backward of a scalar gives d/dx and accumulates over calls") {
  Tensor x = leaf_from({1, -2, 3}, {3});
  backward(sum(x * x));
  CHECK(values(grad(x)) == std::vector<double>{2, -4, 6});
  backward(sum(x * x));  // a fresh forward; gradients add up in .grad
  CHECK(values(grad(x)) == std::vector<double>{4, -8, 12});
  zero_grad(x);
  CHECK_FALSE(grad(x).defined());
}

TEST_CASE("a leaf used several times receives the sum of its gradients") {
  Tensor x = leaf_from({1, 2}, {2});
  backward(sum(x * x + x * 3.0 + x));  // d/dx = 2x + 4
  CHECK(values(grad(x)) == std::vector<double>{6, 8});
}

TEST_CASE("an intermediate used several times is backpropagated once, after all its uses") {
  Tensor x = leaf_from({0.5, -1.0}, {2});
  Tensor h = exp(x);
  backward(sum(h * h + h));  // d/dx = (2h + 1) h
  std::vector<double> g = values(grad(x));
  for (int i = 0; i < 2; ++i) {
    double e = std::exp(x.at({i}));
    CHECK(g[i] == Approx((2 * e + 1) * e));
  }
}

TEST_CASE("broadcast gradients are summed back to the input's shape") {
  Tensor a = leaf_from({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = leaf_from({10, 20, 30}, {3});
  Tensor c = leaf_from({2}, {});
  backward(sum(a * b * c));
  CHECK(values(grad(b)) == std::vector<double>{10, 14, 18});
  CHECK(values(grad(a)) == std::vector<double>{20, 40, 60, 20, 40, 60});
  CHECK(grad(c).shape() == Shape{});
  CHECK(grad(c).item() == Approx(10 * 5 + 20 * 7 + 30 * 9));
}

TEST_CASE("leaves that received the same gradient tensor do not alias each other") {
  Tensor a = leaf_from({1, 1}, {2});
  Tensor b = leaf_from({1, 1}, {2});
  backward(sum(a + b));
  backward(sum(a + b));
  CHECK(values(grad(a)) == std::vector<double>{2, 2});
  CHECK(values(grad(b)) == std::vector<double>{2, 2});
}

TEST_CASE("leaf gradients are contiguous tensors of the leaf's shape and dtype") {
  Tensor x = leaf_from({1, 2, 3, 4, 5, 6}, {2, 3});
  backward(sum(x));  // the sum's backward produces an expanded (stride 0) view
  Tensor g = grad(x);
  CHECK(g.is_contiguous());
  CHECK(g.shape() == x.shape());
  CHECK(g.dtype() == DType::Float64);
  CHECK(values(g) == std::vector<double>(6, 1.0));
}

TEST_CASE("NoGradGuard stops recording and restores the previous mode") {
  Tensor x = leaf_from({1, 2}, {2});
  {
    NoGradGuard outer;
    CHECK_FALSE(grad_mode_enabled());
    {
      NoGradGuard inner;
      CHECK_FALSE(requires_grad(x * 2.0));
    }
    CHECK_FALSE(grad_mode_enabled());
    Tensor y = exp(x);
    CHECK_FALSE(requires_grad(y));
    CHECK(is_leaf(y));
  }
  CHECK(grad_mode_enabled());
  CHECK(requires_grad(x * 2.0));
  CHECK_FALSE(is_leaf(x * 2.0));
}

TEST_CASE("detach shares storage but cuts the graph") {
  Tensor x = leaf_from({3, 4}, {2});
  Tensor d = detach(x);
  CHECK(d.shares_storage(x));
  CHECK_FALSE(requires_grad(d));
  backward(sum(x * d));  // d is a constant: d/dx = d
  CHECK(values(grad(x)) == std::vector<double>{3, 4});
}

TEST_CASE("ops whose inputs need no gradient record nothing") {
  Tensor a = from_doubles({1, 2}, {2}, DType::Float64);
  Tensor y = exp(a) * a;
  CHECK_FALSE(requires_grad(y));
  CHECK_FALSE(y.autograd_meta());
}

TEST_CASE("backward frees the graph: saved tensors and nodes are released") {
  Tensor x = leaf_from({1, 2}, {2});
  Tensor loss = sum(exp(x));
  std::weak_ptr<Node> exp_node = loss.autograd_meta()->grad_fn->edges.at(0).meta->grad_fn;
  REQUIRE_FALSE(exp_node.expired());
  backward(loss);
  CHECK(exp_node.expired());
  CHECK(loss.autograd_meta()->grad_fn->released);
  CHECK(loss.autograd_meta()->grad_fn->edges.empty());
}

TEST_CASE("a second backward through a freed graph is a clear error") {
  Tensor x = leaf_from({1, 2}, {2});
  Tensor h = exp(x);
  Tensor loss = sum(h);
  backward(loss);
  CHECK_THROWS_WITH(backward(loss), Contains("already freed") && Contains("sum"));
  CHECK_THROWS_WITH(backward(sum(h * 2.0)), Contains("already freed") && Contains("exp"));
}

TEST_CASE("a non-scalar root needs a seed of its shape") {
  Tensor x = leaf_from({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH(backward(y), Contains("[2, 3]") && Contains("seed"));
  Tensor bad_seed = ones({3, 2}, DType::Float64);
  CHECK_THROWS_WITH(backward(y, bad_seed), Contains("[3, 2]") && Contains("[2, 3]"));
  Tensor seed = from_doubles({1, 0, -1, 2, 0.5, 0}, {2, 3}, DType::Float64);
  backward(y, seed);
  CHECK(values(grad(x)) == std::vector<double>{2, 0, -2, 4, 1, 0});
  seed.fill_(7.0);  // the caller's seed is not kept by reference
  CHECK(grad(x).at({0, 0}) == 2.0);
}

TEST_CASE("backward on a leaf stores the seed as its gradient") {
  Tensor x = leaf_from({1, 2}, {2});
  backward(x, from_doubles({3, 4}, {2}, DType::Float64));
  CHECK(values(grad(x)) == std::vector<double>{3, 4});
}

TEST_CASE("bad usage is a clear error") {
  Tensor plain = from_doubles({1, 2}, {2}, DType::Float64);
  CHECK_THROWS_WITH(backward(sum(plain)), Contains("does not require grad"));
  CHECK_THROWS_WITH(backward(Tensor()), Contains("undefined"));
  Tensor ints = arange(0, 3);
  CHECK_THROWS_WITH(set_requires_grad(ints), Contains("int64"));
  Tensor x = leaf_from({1, 2}, {2});
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH(set_requires_grad(y), Contains("leaf"));
  CHECK_THROWS_WITH(set_grad(x, zeros({3}, DType::Float64)), Contains("[3]") && Contains("[2]"));
  CHECK_THROWS_WITH(set_grad(x, zeros({2}, DType::Float32)), Contains("float32") && Contains("float64"));
}

TEST_CASE("a backward returning a gradient of the wrong shape is reported with the op's name") {
  Tensor x = leaf_from({1, 2}, {2});
  Tensor y = record("broken", {x}, x.data_only().clone(),
                    [](const Tensor& g) { return std::vector{zeros({5}, DType::Float64)}; });
  CHECK_THROWS_WITH(backward(sum(y)), Contains("broken") && Contains("[5]") && Contains("[2]"));
}

TEST_CASE("multi-output nodes: unused outputs contribute zero gradient") {
  Tensor x = leaf_from({1, 2, 3, 4, 5, 6}, {6});
  std::vector<Tensor> parts = split(x, 2, 0);
  REQUIRE(parts.size() == 3);
  backward(sum(parts[0] * 2.0 + parts[0]) + sum(parts[2]));
  CHECK(values(grad(x)) == std::vector<double>{3, 3, 0, 0, 1, 1});
}

TEST_CASE("long chains backpropagate without recursion") {
  Tensor x = leaf_from({1.0}, {1});
  Tensor y = x;
  for (int i = 0; i < 20000; ++i) y = y * 1.0;
  backward(sum(y));
  CHECK(grad(x).item() == 1.0);
}

TEST_CASE("a long graph dropped without backward is freed without deep recursion") {
  Tensor x = leaf_from({1.0}, {1});
  std::weak_ptr<Node> first;
  {
    Tensor y = x * 1.0;
    first = y.autograd_meta()->grad_fn;
    for (int i = 0; i < 100000; ++i) y = y * 1.0;
  }
  CHECK(first.expired());
}

TEST_CASE("backward functions run with grad mode off") {
  Tensor x = leaf_from({2.0}, {1});
  bool mode_inside = true;
  Tensor y = record("probe", {x}, x.data_only().clone(), [&mode_inside](const Tensor& g) {
    mode_inside = grad_mode_enabled();
    return std::vector{g};
  });
  backward(sum(y));
  CHECK_FALSE(mode_inside);
  CHECK(grad_mode_enabled());
}

TEST_CASE("set_grad and set_requires_grad(false)") {
  Tensor x = leaf_from({1, 2}, {2});
  set_grad(x, from_doubles({5, 6}, {2}, DType::Float64));
  backward(sum(x));
  CHECK(values(grad(x)) == std::vector<double>{6, 7});
  set_requires_grad(x, false);
  CHECK_FALSE(requires_grad(x));
  CHECK_FALSE(requires_grad(x * 2.0));
}

TEST_CASE("Tensor::reshape and view refuse a tensor recording gradients; attn::reshape records") {
  Tensor x = leaf_from({1, 2, 3, 4}, {2, 2});
  CHECK_THROWS_WITH(x.reshape({4}), Contains("Tensor::reshape") && Contains("attn::reshape"));
  CHECK_THROWS_WITH((x * 2.0).view({4}), Contains("Tensor::view"));
  // Recorded, the gradient flows back through the reshape.
  backward(sum(reshape(x, {4}) * from_doubles({1, 2, 3, 4}, {4}, DType::Float64)));
  CHECK(values(grad(x)) == std::vector<double>{1, 2, 3, 4});
  // Detached on purpose, or with grad mode off, the unrecorded views are allowed.
  CHECK(x.data_only().reshape({4}).shape() == Shape{4});
  NoGradGuard no_grad;
  CHECK(x.reshape({4}).view({2, 2}).shape() == Shape{2, 2});
}
