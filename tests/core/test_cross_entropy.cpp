// ops::label_smoothed_cross_entropy and its backward (core/ops_nn.cpp,
// core/cpu/cross_entropy.cpp) against docs/models.md §1.6 (legacy eps/V form) computed
// the plain way — full float64 log-softmax and an explicit smoothed target distribution —
// and the §8 numeric anchor.
#include <catch.hpp>

#include <cmath>

#include "core/ops.hpp"
#include "kernel_test_data.hpp"

using namespace attn;
using attn::test::random_tensor;
using attn::test::require_close;

namespace {

constexpr int64_t kPad = 1;

struct ReferenceLoss {
  double loss = 0.0, nll = 0.0;
  int64_t count = 0;
  std::vector<double> grad;  // d loss / d logits
};

// Cross entropy against q = (1 - eps) onehot(y) + eps/V, summed over non-pad rows.
ReferenceLoss reference_loss(const Tensor& logits, const std::vector<int64_t>& targets, double eps) {
  const int64_t rows = logits.size(0), v = logits.size(1);
  const std::vector<double> x = logits.to_vector();
  ReferenceLoss r;
  r.grad.assign(x.size(), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    if (targets[size_t(i)] == kPad) continue;
    double z = 0.0;
    for (int64_t j = 0; j < v; ++j) z += std::exp(x[size_t(i * v + j)]);
    ++r.count;
    for (int64_t j = 0; j < v; ++j) {
      const double log_p = x[size_t(i * v + j)] - std::log(z);
      const double q = (j == targets[size_t(i)] ? 1.0 - eps : 0.0) + eps / double(v);
      r.loss -= q * log_p;
      if (j == targets[size_t(i)]) r.nll -= log_p;
      r.grad[size_t(i * v + j)] = std::exp(log_p) - q;
    }
  }
  return r;
}

Tensor targets_tensor(const std::vector<int64_t>& t) { return from_vector(t, Shape{int64_t(t.size())}); }

}  // namespace

TEST_CASE("label smoothing anchor of docs/models.md §8: legacy loss 0.502618", "[cross_entropy]") {
  const Tensor logits = from_doubles({std::log(0.7), std::log(0.1), std::log(0.1), std::log(0.1)}, {1, 4}, DType::Float64);
  const ops::CrossEntropyResult r = ops::label_smoothed_cross_entropy(logits, targets_tensor({0}), 0.1, kPad);
  CHECK(r.loss.item() == Approx(0.502618).margin(1e-6));
  CHECK(r.nll.item() == Approx(-std::log(0.7)).margin(1e-12));
  CHECK(r.count == 1);
}

TEST_CASE("label-smoothed cross entropy matches the plain float64 computation", "[cross_entropy]") {
  const double eps = GENERATE(0.0, 0.1);
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  const Tensor logits = random_tensor({6, 11}, dtype, 1, -5.0, 5.0);
  const std::vector<int64_t> targets{3, kPad, 0, 10, kPad, 7};
  const bool with_grad = GENERATE(false, true);
  const ops::CrossEntropyResult r =
      ops::label_smoothed_cross_entropy(logits, targets_tensor(targets), eps, kPad, with_grad);
  const ReferenceLoss expected = reference_loss(logits.to(DType::Float64), targets, eps);
  const double tol = dtype == DType::Float64 ? 1e-11 : 1e-4;
  CHECK(r.count == 4);
  CHECK(r.loss.item() == Approx(expected.loss).margin(tol));
  CHECK(r.nll.item() == Approx(expected.nll).margin(tol));
  if (eps == 0.0) CHECK(r.loss.item() == Approx(r.nll.item()).margin(tol));
  REQUIRE(r.lse.shape() == Shape{6});
  if (!with_grad) {
    CHECK(!r.grad.defined());
    return;
  }
  require_close(r.grad, expected.grad, dtype == DType::Float64 ? 1e-12 : 1e-6);  // pad rows: exactly 0 in both
}

TEST_CASE("cross entropy gradient matches finite differences of the loss", "[cross_entropy]") {
  const Tensor logits = random_tensor({3, 5}, DType::Float64, 2, -2.0, 2.0);
  const std::vector<int64_t> targets{4, 0, kPad};
  const std::vector<double> grad =
      ops::label_smoothed_cross_entropy(logits, targets_tensor(targets), 0.1, kPad, /*with_grad=*/true)
          .grad.to_vector();
  const std::vector<double> x = logits.to_vector();
  const double h = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    auto loss_at = [&](double delta) {
      std::vector<double> shifted = x;
      shifted[i] += delta;
      return ops::label_smoothed_cross_entropy(from_doubles(shifted, logits.shape(), DType::Float64),
                                               targets_tensor(targets), 0.1, kPad)
          .loss.item();
    };
    INFO("element " << i);
    CHECK(grad[i] == Approx((loss_at(h) - loss_at(-h)) / (2 * h)).margin(1e-8));
  }
}

TEST_CASE("cross entropy takes [..., V] logits with [...] targets and large logits", "[cross_entropy]") {
  const Tensor logits = random_tensor({2, 3, 7}, DType::Float32, 3, 500.0, 510.0);
  const std::vector<int64_t> targets{0, 6, kPad, 2, 3, 5};
  const ops::CrossEntropyResult r =
      ops::label_smoothed_cross_entropy(logits, from_vector(targets, Shape{2, 3}), 0.1, kPad, /*with_grad=*/true);
  const ReferenceLoss expected = reference_loss(logits.to(DType::Float64).reshape({6, 7}), targets, 0.1);
  CHECK(r.count == 5);
  CHECK(r.loss.item() == Approx(expected.loss).margin(1e-3));
  REQUIRE(r.grad.shape() == logits.shape());
  require_close(r.grad.reshape({6, 7}), expected.grad, 1e-5);
}

TEST_CASE("cross entropy over zero rows is zero with count 0", "[cross_entropy]") {
  const ops::CrossEntropyResult r =
      ops::label_smoothed_cross_entropy(Tensor({0, 5}), from_vector(std::vector<int64_t>{}, Shape{0}), 0.1, kPad);
  CHECK(r.loss.item() == 0.0);
  CHECK(r.count == 0);
}

TEST_CASE("cross entropy rejects bad targets naming the index and the bound", "[cross_entropy]") {
  const Tensor logits = random_tensor({2, 5}, DType::Float32, 4);
  CHECK_THROWS_WITH(ops::label_smoothed_cross_entropy(logits, targets_tensor({0, 5}), 0.1, kPad),
                    Catch::Contains("target 5") && Catch::Contains("[0, 5)"));
  CHECK_THROWS_WITH(ops::label_smoothed_cross_entropy(logits, targets_tensor({0, -2}), 0.1, kPad),
                    Catch::Contains("target -2"));
  CHECK_THROWS_WITH(ops::label_smoothed_cross_entropy(logits, targets_tensor({0, 1, 2}), 0.1, kPad),
                    Catch::Contains("[3]") && Catch::Contains("[2, 5]"));
  CHECK_THROWS_WITH(ops::label_smoothed_cross_entropy(logits, targets_tensor({0, 1}).to(DType::Float32), 0.1, kPad),
                    Catch::Contains("float32"));
  CHECK_THROWS_WITH(ops::label_smoothed_cross_entropy(logits, targets_tensor({0, 1}), 1.5, kPad),
                    Catch::Contains("epsilon"));
}
