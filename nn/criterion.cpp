#include "nn/criterion.hpp"

namespace attn::nn {

LabelSmoothedCrossEntropy::LabelSmoothedCrossEntropy(double epsilon, int64_t padding_idx)
    : epsilon_(epsilon), padding_idx_(padding_idx) {
  ATTN_CHECK(epsilon >= 0.0 && epsilon < 1.0, "label smoothing epsilon must be in [0, 1), got {}", epsilon);
}

CriterionOutput LabelSmoothedCrossEntropy::operator()(const Tensor& logits, const Tensor& targets) const {
  ATTN_CHECK(logits.dim() >= 2 && targets.dtype() == DType::Int64 && targets.dim() == logits.dim() - 1,
             "criterion: expected logits [..., V] and int64 targets [...], got logits {} and {} targets {}",
             logits.shape().str(), dtype_name(targets.dtype()), targets.shape().str());
  for (int d = 0; d < targets.dim(); ++d)
    ATTN_CHECK(targets.size(d) == logits.size(d), "criterion: targets {} do not match logits {}", targets.shape().str(),
               logits.shape().str());
  const int64_t vocab = logits.size(-1);
  CriterionOutput out;
  out.loss = label_smoothed_cross_entropy(reshape(logits, {-1, vocab}), targets.reshape({-1}), epsilon_, padding_idx_,
                                          &out.nll_sum, &out.ntokens);
  return out;
}

}  // namespace attn::nn
