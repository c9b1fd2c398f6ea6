// The gated linear attention's forward and fused backward. See gated_linear_attention.hpp.
#include "autograd/fused/gated_linear_attention.hpp"

namespace attn {

Tensor gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a, const Tensor& b) {
  const Tensor qd = detach(q), kd = detach(k), vd = detach(v);
  const Tensor ad = a.defined() ? detach(a) : Tensor(), bd = b.defined() ? detach(b) : Tensor();
  return record("gated_linear_attention", {q, k, v, a, b}, ops::gated_linear_attention(qd, kd, vd, ad, bd).y,
                [qd, kd, vd, ad, bd](const Tensor& g) {
                  ops::GatedLinearAttentionGrads grads = ops::gated_linear_attention_backward(qd, kd, vd, ad, bd, g);
                  return std::vector{grads.dq, grads.dk, grads.dv, grads.da, grads.db};
                });
}

}  // namespace attn
