// Differentiable inverted dropout (Srivastava et al. 2014, with the 1/(1-p) scaling at
// training time), alone and fused with the residual add a Transformer layer puts after it
// (docs/models.md §1.4: x + Dropout(f(x))). The forward's Bool keep-mask is saved (one byte
// per element) and the backward is one kernel, dx = keep ? dy / (1 - p) : 0; the fused form
// hands dy to the residual unchanged, so it saves the add's pass and output tensor in the
// forward and nothing extra is kept for the backward.
#include "autograd/ops.hpp"

namespace attn {

namespace {

void check_probability(const char* op, double p) {
  ATTN_CHECK(p >= 0.0 && p <= 1.0, "{}: probability must be in [0, 1], got {}", op, p);
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  check_probability("dropout", p);
  if (!training || p == 0.0) return x;
  ops::DropoutResult r = ops::dropout(x, p, gen);
  return record("dropout", {x}, r.out,
                [keep = r.mask, p](const Tensor& g) { return std::vector{ops::dropout_backward(g, keep, p)}; });
}

Tensor dropout_add(const Tensor& x, const Tensor& residual, double p, bool training, Generator* gen) {
  check_probability("dropout_add", p);
  if (!training || p == 0.0) return add(residual, x);
  ops::DropoutResult r = ops::dropout_add(x, residual, p, gen);
  return record("dropout_add", {x, residual}, r.out, [keep = r.mask, p](const Tensor& g) {
    return std::vector{ops::dropout_backward(g, keep, p), g};
  });
}

}  // namespace attn
