// Label-smoothed cross entropy over a model's output (docs/models.md §1.6, legacy form):
// for each non-pad target with log-probabilities ℓ ∈ ℝ^V and gold y,
//   loss = (1−ε)·(−ℓ_y) + (ε/V)·(−Σ_v ℓ_v),
// i.e. cross entropy against (1−ε)·onehot(y) + (ε/V)·1. Pad targets are masked; the
// criterion returns sums — the trainer divides gradients by the token count of the whole
// update (§1.9). V counts the whole dictionary, specials included.
#pragma once
#include <cstdint>

#include "autograd/ops.hpp"

namespace attn::nn {

struct CriterionOutput {
  Tensor loss;           // 0-d, the logits' dtype: summed smoothed loss, differentiable
  double nll_sum = 0.0;  // summed −ℓ_y over non-pad targets
  int64_t ntokens = 0;   // non-pad targets (</s> included): the sample size
};

class LabelSmoothedCrossEntropy {
 public:
  explicit LabelSmoothedCrossEntropy(double epsilon = 0.1, int64_t padding_idx = 1);
  // logits [B, T, V] (or [N, V]), targets int64 [B, T] (or [N]); shapes checked.
  CriterionOutput operator()(const Tensor& logits, const Tensor& targets) const;

  double epsilon() const { return epsilon_; }
  int64_t padding_idx() const { return padding_idx_; }

 private:
  double epsilon_;
  int64_t padding_idx_;
};

}  // namespace attn::nn
