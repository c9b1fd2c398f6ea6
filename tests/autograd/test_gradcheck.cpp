// gradcheck itself (autograd/gradcheck.cpp): it passes correct backwards, catches a wrong
// one and names the input, the element's multi-index and both values, and rejects inputs it
// cannot perturb.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using attn::testing::leaf;
using Catch::Matchers::Contains;

namespace {

// x * x with a backward that is wrong only at flat element 4 (multi-index [1, 1] of [2, 3]).
Tensor square_with_bad_element(const Tensor& x) {
  Tensor y = ops::mul(x, x);
  return record("bad_square", {x}, y, [x = detach(x)](const Tensor& g) {
    Tensor dx = ops::mul(ops::mul(g, x), 2.0);
    dx.set({1, 1}, dx.at({1, 1}) + 0.5);
    return std::vector{dx};
  });
}

}  // namespace

TEST_CASE("gradcheck passes a correct backward and reports a small error") {
  Tensor a = leaf({2, 3}, 1), b = leaf({3}, 2);
  GradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[1]; }, {a, b});
  CHECK(r.ok);
  CHECK(r.message.empty());
  CHECK(r.max_abs_error < 1e-8);
}

TEST_CASE("gradcheck catches a wrong gradient and names input, element and values") {
  Tensor other = leaf({2}, 3), x = leaf({2, 3}, 4);
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return square_with_bad_element(in[1]) + sum(in[0]); }, {other, x});
  REQUIRE_FALSE(r.ok);
  CHECK_THAT(r.message, Contains("input 1") && Contains("[1, 1]") && Contains("analytic") && Contains("numeric"));
  CHECK_THAT(r.message, Contains("1 element"));
  CHECK(r.max_abs_error > 0.1);
}

TEST_CASE("gradcheck skips inputs that do not require grad and rejects what it cannot check") {
  Tensor fixed = from_doubles({1, 2}, {2}, DType::Float64);
  Tensor x = leaf({2}, 5);
  CHECK(gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[1]; }, {fixed, x}).ok);

  Tensor x32 = ones({2});
  set_requires_grad(x32);
  CHECK_THROWS_WITH(gradcheck([](const std::vector<Tensor>& in) { return in[0]; }, {x32}), Contains("float32"));

  Tensor broadcast = from_doubles({1}, {1}, DType::Float64).expand({3});
  set_requires_grad(broadcast);
  CHECK_THROWS_WITH(gradcheck([](const std::vector<Tensor>& in) { return in[0]; }, {broadcast}),
                    Contains("broadcast"));
}

TEST_CASE("gradcheck leaves the inputs' values unchanged") {
  Tensor x = leaf({3}, 6);
  std::vector<double> before = x.to_vector();
  gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]); }, {x});
  CHECK(x.to_vector() == before);
}
