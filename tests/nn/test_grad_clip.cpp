// Tests for nn/grad_clip (docs/models.md §1.9): the global norm against hand values and a
// double reference, the scaled norm and the optimizer's factor — scale, times
// min(1, c/(norm + 1e-6)) when clipping — with c = 0 disabling clipping, the gradients never
// written, non-finite norms reported, and independence from the thread count.
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

TEST_CASE("the scaled norm is the norm of scale times the gradients, which stay as they are", "[grad_clip]") {
  auto params = pythagorean_params();
  const GradScale s = scaled_grad_norm(params, 0.25, 0.0);
  CHECK(s.norm == 3.25);  // 0.25 · 13
  CHECK(s.factor == 0.25);
  CHECK(grad_values(params[0]) == std::vector<float>{3.0f, 4.0f});
  CHECK(grad_values(params[1]) == std::vector<float>{12.0f});
  CHECK_FALSE(grad(params[2]).defined());
}

TEST_CASE("clipping multiplies the factor by c/(norm + 1e-6) and reports the norm before clipping", "[grad_clip]") {
  auto params = pythagorean_params();
  const GradScale s = scaled_grad_norm(params, 0.5, 3.25);
  CHECK(s.norm == 6.5);
  CHECK(s.factor == 0.5 * (3.25 / (6.5 + 1e-6)));
  CHECK(grad_values(params[0]) == std::vector<float>{3.0f, 4.0f});
}

TEST_CASE("c = 0 and c above the norm leave the factor at the scale", "[grad_clip]") {
  auto params = pythagorean_params();
  CHECK(scaled_grad_norm(params, 1.0, 0.0).factor == 1.0);
  CHECK(scaled_grad_norm(params, 1.0, 100.0).factor == 1.0);
  CHECK(scaled_grad_norm(params, 1.0, 100.0).norm == 13.0);
  CHECK_THROWS_WITH(scaled_grad_norm(params, 1.0, -1.0), Contains("--clip-norm"));
  CHECK_THROWS_WITH(scaled_grad_norm(params, 0.0, 1.0), Contains("the scale must be positive"));
}

TEST_CASE("a non-finite norm is reported and the factor is not clipped", "[grad_clip]") {
  const float bad = GENERATE(std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN());
  std::vector<Tensor> params = {with_grad({2}, {1.0f, bad}), with_grad({1}, {2.0f})};
  const GradScale s = scaled_grad_norm(params, 0.5, 1.0);
  CHECK_FALSE(std::isfinite(s.norm));
  CHECK(s.factor == 0.5);
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
