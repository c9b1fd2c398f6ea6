// Gradient of the fused label-smoothed cross entropy (autograd/ops_loss.cpp,
// docs/models.md §1.6 legacy form): gradcheck with ignored targets, and value, NLL, count
// and gradient against the composed definition
//   loss = sum over non-ignored rows of (1 - eps) * nll + eps / V * smooth.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

const int64_t kIgnore = 1;

Tensor targets() { return from_vector<int64_t>({2, 1, 0, 4}, {4}); }  // row 1 is ignored

// The definition, composed of differentiable ops, for comparison.
Tensor composed_loss(const Tensor& logits, const Tensor& target_ids, double eps) {
  const int64_t rows = logits.size(0), vocab = logits.size(1);
  Tensor logp = log_softmax(logits, -1);
  Tensor loss = scalar_tensor(0.0, logits.dtype());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t y = int64_t(target_ids.at({r}));
    if (y == kIgnore) continue;
    Tensor row = select(logp, 0, r);
    Tensor nll = -select(row, 0, y);
    Tensor smooth = -sum(row);
    loss = loss + nll * (1.0 - eps) + smooth * (eps / double(vocab));
  }
  return loss;
}

}  // namespace

TEST_CASE("label-smoothed cross entropy: gradcheck, with an ignored row") {
  Tensor ids = targets();
  for (double eps : {0.0, 0.1}) {
    auto f = [ids, eps](const std::vector<Tensor>& in) {
      return label_smoothed_cross_entropy(in[0], ids, eps, kIgnore);
    };
    check_gradients(f, {leaf({4, 5}, 191, -2, 2)});
    check_gradients(f, {transposed_leaf({4, 5}, 192, -2, 2)});
  }
}

TEST_CASE("label-smoothed cross entropy matches its definition in value, NLL, count and gradient") {
  const double eps = 0.1;
  Tensor logits = leaf({4, 5}, 193, -2, 2);
  double nll_sum = 0.0;
  int64_t count = 0;
  Tensor fused = label_smoothed_cross_entropy(logits, targets(), eps, kIgnore, &nll_sum, &count);
  CHECK(fused.dtype() == DType::Float64);
  CHECK(fused.shape() == Shape{});
  CHECK(count == 3);
  Tensor composed = composed_loss(logits, targets(), eps);
  CHECK(fused.item() == Approx(composed.item()).epsilon(1e-12));
  CHECK(nll_sum == Approx(composed_loss(logits, targets(), 0.0).item()).epsilon(1e-12));

  backward(fused * 2.5);  // grad_output scales the gradient of the summed loss
  std::vector<double> g = values(grad(logits));
  zero_grad(logits);
  backward(composed * 2.5);
  std::vector<double> expected = values(grad(logits));
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-10).margin(1e-12));
  for (int64_t v = 0; v < 5; ++v) CHECK(g[5 + v] == 0.0);  // the ignored row
}

TEST_CASE("label-smoothed cross entropy in float32 returns a float32 loss") {
  Tensor logits = detach(leaf({4, 5}, 194)).to(DType::Float32);
  set_requires_grad(logits);
  Tensor loss = label_smoothed_cross_entropy(logits, targets(), 0.1, kIgnore);
  CHECK(loss.dtype() == DType::Float32);
  backward(loss);
  CHECK(grad(logits).dtype() == DType::Float32);
}
