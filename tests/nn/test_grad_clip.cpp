// Tests for nn/grad_clip (docs/models.md §1.9): the global norm against hand values and a
// double reference, clipping by min(1, c/(norm + 1e-6)), c = 0 disabling it, non-finite
// norms leaving the gradients alone, and independence from the thread count.
#include <catch.hpp>

#include <cmath>
#include <limits>

#include "autograd/autograd.hpp"
#include "core/threads.hpp"
#include "nn/grad_clip.hpp"

using namespace attn;
using namespace attn::nn;
using Catch::Matchers::Contains;

namespace {

Tensor with_grad(const Shape& shape, const std::vector<float>& g) {
  Tensor p = zeros(shape);
  set_requires_grad(p);
  set_grad(p, from_vector<float>(g, shape));
  return p;
}

std::vector<float> grad_values(const Tensor& p) {
  Tensor g = grad(p);
  return {g.data<float>(), g.data<float>() + g.numel()};
}

// Three parameters with gradients (3, 4), (12) and none: global norm 13.
std::vector<Tensor> pythagorean_params() {
  Tensor no_grad = zeros({2});
  set_requires_grad(no_grad);
  return {with_grad({2}, {3.0f, 4.0f}), with_grad({1, 1}, {12.0f}), no_grad};
}

}  // namespace

TEST_CASE("the global norm covers every gradient and skips missing ones", "[grad_clip]") {
  auto params = pythagorean_params();
  CHECK(grad_norm(params) == 13.0);
  CHECK(grad_norm({}) == 0.0);
}

TEST_CASE("clipping scales every gradient by c/(norm + 1e-6) and returns the norm before clipping", "[grad_clip]") {
  auto params = pythagorean_params();
  const double norm = clip_grad_norm(params, 6.5);
  CHECK(norm == 13.0);
  const double coef = 6.5 / (13.0 + 1e-6);
  CHECK(grad_values(params[0]) == std::vector<float>{float(coef) * 3.0f, float(coef) * 4.0f});
  CHECK(grad_values(params[1]) == std::vector<float>{float(coef) * 12.0f});
  CHECK(grad_norm(params) == Approx(6.5).epsilon(1e-6));
}

TEST_CASE("c = 0 and c above the norm leave the gradients unchanged", "[grad_clip]") {
  auto params = pythagorean_params();
  CHECK(clip_grad_norm(params, 0.0) == 13.0);
  CHECK(clip_grad_norm(params, 100.0) == 13.0);
  CHECK(grad_values(params[0]) == std::vector<float>{3.0f, 4.0f});
  CHECK_THROWS_WITH(clip_grad_norm(params, -1.0), Contains("--clip-norm"));
}

TEST_CASE("multiply_grads scales in place (token normalisation)", "[grad_clip]") {
  auto params = pythagorean_params();
  multiply_grads(params, 0.25);
  CHECK(grad_values(params[0]) == std::vector<float>{0.75f, 1.0f});
  CHECK(grad_values(params[1]) == std::vector<float>{3.0f});
  CHECK_FALSE(grad(params[2]).defined());
}

TEST_CASE("a non-finite norm is reported and the gradients are left alone", "[grad_clip]") {
  const float bad = GENERATE(std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN());
  std::vector<Tensor> params = {with_grad({2}, {1.0f, bad}), with_grad({1}, {2.0f})};
  CHECK_FALSE(std::isfinite(clip_grad_norm(params, 1.0)));
  CHECK(grad_values(params[1]) == std::vector<float>{2.0f});
}

TEST_CASE("the norm of large gradients matches a double reference for any thread count", "[grad_clip]") {
  std::vector<float> values(300001);
  double reference = 0.0;
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = float(std::sin(0.001 * double(i)) * 1e-3);
    reference += double(values[i]) * double(values[i]);
  }
  std::vector<Tensor> params = {with_grad({int64_t(values.size())}, values)};
  const int threads = get_num_threads();
  set_num_threads(1);
  const double one_thread = grad_norm(params);
  set_num_threads(2);
  const double two_threads = grad_norm(params);
  set_num_threads(threads);
  CHECK(one_thread == Approx(std::sqrt(reference)).epsilon(1e-12));
  CHECK(one_thread == two_threads);
}

TEST_CASE("unscale_grads divides by the loss scale and reports an overflow", "[grad_clip]") {
  std::vector<Tensor> params = pythagorean_params();
  CHECK(unscale_grads(params, 4.0));
  CHECK(grad_values(params[0]) == std::vector<float>{0.75f, 1.0f});
  CHECK(grad_values(params[1]) == std::vector<float>{3.0f});

  const float inf = std::numeric_limits<float>::infinity();
  std::vector<Tensor> overflowed = {with_grad({2}, {1.0f, inf}), with_grad({1}, {2.0f})};
  CHECK_FALSE(unscale_grads(overflowed, 2.0));
  CHECK(grad_values(overflowed[1]) == std::vector<float>{1.0f});  // every gradient is still unscaled
  CHECK(unscale_grads({}, 2.0));
  CHECK_THROWS_WITH(unscale_grads(params, 0.0), Contains("loss scaling: the scale must be positive"));
}
