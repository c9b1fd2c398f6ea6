// Differentiable label-smoothed cross entropy (docs/models.md §1.6, legacy eps/V form) over
// the fused core kernels: the forward never materialises log-probabilities or a one-hot
// matrix and saves only the per-row log-sum-exp; the backward writes
//   dlogits = dy * (softmax(logits) - q),  q = (1 - eps) * onehot(target) + eps / V,
// for non-ignored rows (zero for ignored ones), scaled by the incoming gradient dy of the sum.
#include "autograd/ops.hpp"

namespace attn {

Tensor label_smoothed_cross_entropy(const Tensor& logits, const Tensor& targets, double epsilon,
                                    int64_t ignore_index, double* nll_sum, int64_t* count) {
  ops::CrossEntropyResult r = ops::label_smoothed_cross_entropy(logits, targets, epsilon, ignore_index);
  if (nll_sum) *nll_sum = r.nll.item();
  if (count) *count = r.count;
  Tensor loss = r.loss.to(logits.dtype());
  return record("label_smoothed_cross_entropy", {logits, targets}, loss,
                [logits = detach(logits), targets, lse = r.lse, epsilon, ignore_index](const Tensor& g) {
                  Tensor dlogits = ops::label_smoothed_cross_entropy_backward(logits, targets, lse, epsilon,
                                                                              ignore_index, g.item());
                  return std::vector{dlogits, Tensor()};
                });
}

}  // namespace attn
