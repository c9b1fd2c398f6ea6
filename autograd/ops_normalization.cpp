// Differentiable softmax, log-softmax and layer norm, each with the fused backward kernel
// from core (docs/design.md §3: fused ops where they matter for speed and memory):
//   softmax:      dx = y * (dy - sum(dy * y))          (from the saved output y)
//   log_softmax:  dx = dy - exp(y) * sum(dy)
//   layer_norm:   y = (x - mean) * rstd * gamma + beta (Ba et al. 2016, eq. 4), with mean and
//                 rstd saved by the forward; the backward gives dx, dgamma and dbeta at once.
#include "autograd/ops.hpp"

namespace attn {
namespace {

Tensor softmax_family(const char* name, const Tensor& x, int64_t dim, bool log) {
  Tensor y = log ? ops::log_softmax(x, dim) : ops::softmax(x, dim);
  return record(name, {x}, y, [y, dim, log](const Tensor& g) {
    return std::vector{ops::softmax_backward(y, g.contiguous(), dim, log)};
  });
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_family("softmax", x, dim, false); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_family("log_softmax", x, dim, true); }

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  ops::LayerNormResult r = ops::layer_norm(x, gamma, beta, eps);
  bool need_affine = requires_grad(gamma) || requires_grad(beta);
  return record("layer_norm", {x, gamma, beta}, r.out,
                [x = detach(x), gamma = detach(gamma), mean = r.mean, rstd = r.rstd, need_affine](const Tensor& g) {
                  ops::LayerNormGrads d = ops::layer_norm_backward(g.contiguous(), x, gamma, mean, rstd, need_affine);
                  return std::vector{d.dx, d.dgamma, d.dbeta};
                });
}

}  // namespace attn
