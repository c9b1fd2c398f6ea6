// Gradients of the differentiable views (autograd/ops_views.cpp): each routes its gradient
// back to the base's shape; views are composed with a multiplication so that every element
// of the gradient differs, and applied to non-contiguous bases.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

using ViewFn = std::function<Tensor(const Tensor&)>;

// The view times fixed distinct weights, so a misrouted gradient shows up.
void check_view(const ViewFn& op, const Shape& shape) {
  auto f = [op](const std::vector<Tensor>& in) {
    Tensor v = op(in[0]);
    Tensor w = ops::add(arange(0, double(v.numel()), 1, DType::Float64).reshape(v.shape()), 1.0);
    return v * w.to(v.dtype());
  };
  check_gradients(f, {leaf(shape, 61)});
  if (shape.size() >= 2) check_gradients(f, {transposed_leaf(shape, 62)});
}

}  // namespace

TEST_CASE("reshaping views") {
  check_view([](const Tensor& x) { return reshape(x, {3, 2, 2}); }, {2, 6});
  check_view([](const Tensor& x) { return reshape(x, {-1}); }, {3, 4});
  check_view([](const Tensor& x) { return view(x, {4, 3}); }, {12});
  check_view([](const Tensor& x) { return unsqueeze(x, 1); }, {2, 3});
  check_view([](const Tensor& x) { return squeeze(x, 1); }, {3, 1, 2});
}

TEST_CASE("permute and transpose") {
  check_view([](const Tensor& x) { return permute(x, {2, 0, 1}); }, {2, 3, 4});
  check_view([](const Tensor& x) { return permute(x, {1, 2, 0}); }, {2, 3, 4});
  check_view([](const Tensor& x) { return transpose(x, 0, 2); }, {2, 3, 4});
  check_view([](const Tensor& x) { return transpose(x, -1, -2); }, {3, 2});
}

TEST_CASE("narrow and select put the gradient into the slice and zeros elsewhere") {
  check_view([](const Tensor& x) { return narrow(x, 1, 1, 2); }, {2, 4});
  check_view([](const Tensor& x) { return narrow(x, 0, 0, 1); }, {3, 2});
  check_view([](const Tensor& x) { return select(x, 0, 1); }, {3, 2});
  check_view([](const Tensor& x) { return select(x, -1, 2); }, {2, 3});
  Tensor x = leaf({2, 4}, 63);
  backward(sum(narrow(x, 1, 1, 2)) + sum(select(x, 0, 1)));
  CHECK(values(grad(x)) == std::vector<double>{0, 1, 1, 0, 1, 2, 2, 1});
}

TEST_CASE("expand sums the gradient over the broadcast dims") {
  check_view([](const Tensor& x) { return expand(x, {2, 3, 4}); }, {3, 1});
  check_view([](const Tensor& x) { return expand(x, {3, 2}); }, {2});
  Tensor x = leaf({1, 2}, 64);
  backward(sum(expand(x, {3, 2})));
  CHECK(values(grad(x)) == std::vector<double>{3, 3});
}

TEST_CASE("contiguous is the identity for gradients") {
  check_view([](const Tensor& x) { return contiguous(x); }, {2, 3});
}

TEST_CASE("chained views of a non-contiguous base") {
  check_view([](const Tensor& x) { return reshape(narrow(transpose(x, 0, 1), 0, 1, 2), {-1}); }, {2, 3});
}
