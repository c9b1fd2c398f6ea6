// The delta rule's forward and fused backward. See delta_rule.hpp.
#include "autograd/fused/delta_rule.hpp"

namespace attn {

Tensor delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta) {
  const Tensor qd = detach(q), kd = detach(k), vd = detach(v), bd = detach(beta);
  return record("delta_rule", {q, k, v, beta}, ops::delta_rule(qd, kd, vd, bd).y, [qd, kd, vd, bd](const Tensor& g) {
    ops::DeltaRuleGrads grads = ops::delta_rule_backward(qd, kd, vd, bd, g);
    return std::vector{grads.dq, grads.dk, grads.dv, grads.dbeta};
  });
}

}  // namespace attn
