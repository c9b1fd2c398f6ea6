// Differentiable inverted dropout (Srivastava et al. 2014, with the 1/(1-p) scaling at
// training time): the forward's Bool keep-mask is saved (one byte per element) and the
// backward is dx = keep ? dy / (1 - p) : 0.
#include "autograd/ops.hpp"

namespace attn {

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  ATTN_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got {}", p);
  if (!training || p == 0.0) return x;
  ops::DropoutResult r = ops::dropout(x, p, gen);
  return record("dropout", {x}, r.out, [keep = r.mask, p](const Tensor& g) {
    Tensor scaled = p < 1.0 ? ops::mul(g, 1.0 / (1.0 - p)) : g;
    return std::vector{ops::where(keep, scaled, scalar_tensor(0.0, g.dtype(), g.device()))};
  });
}

}  // namespace attn
