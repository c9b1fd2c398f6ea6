// Differentiable label-smoothed cross entropy (docs/models.md §1.6, legacy eps/V form) over
// the fused core kernel: it never materialises log-probabilities or a one-hot matrix and,
// when the logits need a gradient, writes in the same pass
//   d(loss)/d(logits) = softmax(logits) - q,  q = (1 - eps) * onehot(target) + eps / V,
// for non-ignored rows (zero for ignored ones); the backward only scales that by the incoming
// gradient dy of the sum (1 in training, where it is returned as it is).
#include "autograd/ops.hpp"

namespace attn {

Tensor label_smoothed_cross_entropy(const Tensor& logits, const Tensor& targets, double epsilon,
                                    int64_t ignore_index, double* nll_sum, int64_t* count) {
  const bool with_grad = any_requires_grad({logits});
  ops::CrossEntropyResult r = ops::label_smoothed_cross_entropy(logits, targets, epsilon, ignore_index, with_grad);
  if (nll_sum) *nll_sum = r.nll.item();
  if (count) *count = r.count;
  Tensor loss = r.loss.to(logits.dtype());
  return record("label_smoothed_cross_entropy", {logits, targets}, loss, [unit_grad = r.grad](const Tensor& g) {
    const double dy = g.item();
    return std::vector{dy == 1.0 ? unit_grad : ops::mul(unit_grad, dy), Tensor()};
  });
}

}  // namespace attn
