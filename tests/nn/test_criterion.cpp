// Label-smoothed cross entropy criterion (nn/criterion.hpp, docs/models.md §1.6): the §8
// anchor (legacy ε/V form), pad masking, token counts, gradients, shape errors.
#include <catch.hpp>

#include <cmath>

#include "../autograd/grad_test_util.hpp"
#include "nn/criterion.hpp"

using namespace attn;
using namespace attn::testing;

TEST_CASE("criterion: §8 anchor, legacy form, V = 4, ε = 0.1, p = (0.7, 0.1, 0.1, 0.1), gold 0") {
  // Logits log p plus an arbitrary shift (softmax is shift-invariant); a second, pad target is masked.
  Tensor logits = from_vector<double>({std::log(0.7) + 3, std::log(0.1) + 3, std::log(0.1) + 3, std::log(0.1) + 3,
                                       5, -2, 0, 1},
                                      {1, 2, 4});
  Tensor targets = from_vector<int64_t>({0, 1}, {1, 2});
  nn::LabelSmoothedCrossEntropy criterion(0.1, 1);
  nn::CriterionOutput out = criterion(logits, targets);
  CHECK(out.loss.item() == Approx(0.502618).margin(1e-6));
  CHECK(out.nll_sum == Approx(-std::log(0.7)).margin(1e-12));
  CHECK(out.ntokens == 1);
}

TEST_CASE("criterion: summed over non-pad targets; ε = 0 is the NLL; gradient checks") {
  Tensor logits = leaf({2, 3, 5}, 40, -2, 2);
  Tensor targets = from_vector<int64_t>({4, 0, 1, 2, 3, 1}, {2, 3});
  nn::CriterionOutput plain = nn::LabelSmoothedCrossEntropy(0.0, 1)(logits, targets);
  Tensor lp = ops::log_softmax(detach(logits), -1);
  double nll = 0;
  for (auto [b, t, y] : {std::tuple{0, 0, 4}, {0, 1, 0}, {1, 0, 2}, {1, 1, 3}}) nll -= lp.at({b, t, y});
  CHECK(plain.ntokens == 4);
  CHECK(plain.loss.item() == Approx(nll).epsilon(1e-12));
  CHECK(plain.nll_sum == Approx(nll).epsilon(1e-12));

  nn::LabelSmoothedCrossEntropy smoothed(0.1, 1);
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return smoothed(in[0], targets).loss; }, {logits});
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("criterion rejects mismatched shapes and non-integer targets") {
  nn::LabelSmoothedCrossEntropy criterion(0.1, 1);
  Tensor logits = zeros({2, 3, 5});
  CHECK_THROWS_AS(criterion(logits, zeros({2, 4}, DType::Int64)), Error);
  CHECK_THROWS_AS(criterion(logits, zeros({2, 3})), Error);
  CHECK_THROWS_AS(criterion(logits, zeros({6}, DType::Int64)), Error);
  CHECK_THROWS_AS(nn::LabelSmoothedCrossEntropy(1.0, 1), Error);
}
