// Gradients of the reductions and cumsum (autograd/ops_reduce.cpp): every op over all
// dims, one dim, several dims, negative dims, with and without keepdim, on contiguous and
// non-contiguous inputs; and the tie rule of amax/amin.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

using ReduceFn = std::function<Tensor(const Tensor&, const std::vector<int64_t>&, bool)>;

void check_reduction(const ReduceFn& op) {
  const std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {-1}, {0, 2}, {1}};
  for (const auto& dims : dim_sets) {
    for (bool keepdim : {false, true}) {
      INFO("dims of size " << dims.size() << (dims.empty() ? "" : " first " + std::to_string(dims[0]))
                           << " keepdim " << keepdim);
      auto f = [op, dims, keepdim](const std::vector<Tensor>& in) { return op(in[0], dims, keepdim); };
      check_gradients(f, {leaf({2, 3, 4}, 51)});
      check_gradients(f, {transposed_leaf({2, 3, 4}, 52)});
    }
  }
}

}  // namespace

TEST_CASE("sum and mean") {
  check_reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return sum(x, d, k); });
  check_reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return mean(x, d, k); });
}

TEST_CASE("amax and amin (distinct values)") {
  check_reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return amax(x, d, k); });
  check_reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return amin(x, d, k); });
}

TEST_CASE("amax and amin split the gradient evenly between tied extrema") {
  Tensor x = from_doubles({1, 3, 3, 0, 2, 0, 5, 5}, {2, 4}, DType::Float64);
  set_requires_grad(x);
  backward(sum(amax(x, {1})));
  CHECK(values(grad(x)) == std::vector<double>{0, 0.5, 0.5, 0, 0, 0, 0.5, 0.5});
  zero_grad(x);
  backward(sum(amin(x, {1})));
  CHECK(values(grad(x)) == std::vector<double>{0, 0, 0, 1, 0, 1, 0, 0});
}

TEST_CASE("logsumexp and norm") {
  check_reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return logsumexp(x, d, k); });
  check_reduction([](const Tensor& x, const std::vector<int64_t>& d, bool k) { return norm(x, d, k); });
}

TEST_CASE("norm of an all-zero slice has a zero (sub)gradient, not NaN") {
  Tensor x = from_doubles({0, 0, 3, 4}, {2, 2}, DType::Float64);
  set_requires_grad(x);
  backward(sum(norm(x, {1})));
  std::vector<double> g = values(grad(x));
  CHECK(g[0] == 0.0);
  CHECK(g[1] == 0.0);
  CHECK(g[2] == Approx(0.6));
  CHECK(g[3] == Approx(0.8));
}

TEST_CASE("cumsum forward and reverse along each dim") {
  for (int64_t dim : {0, 1, -1}) {
    for (bool reverse : {false, true}) {
      auto f = [dim, reverse](const std::vector<Tensor>& in) { return cumsum(in[0], dim, reverse); };
      check_gradients(f, {leaf({3, 4}, 53)});
      check_gradients(f, {transposed_leaf({3, 4}, 54)});
    }
  }
  Tensor x = from_doubles({1, 2, 3}, {3}, DType::Float64);
  set_requires_grad(x);
  backward(sum(cumsum(x, 0)));  // element i appears in n - i prefix sums
  CHECK(values(grad(x)) == std::vector<double>{3, 2, 1});
}
