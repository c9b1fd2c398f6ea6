// The banded convolution's forward and fused backward. See banded_conv.hpp.
#include "autograd/fused/banded_conv.hpp"

namespace attn {

Tensor banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left) {
  const Tensor u_data = detach(u), w_data = detach(w);
  return record("banded_conv", {u, w}, ops::banded_conv(u_data, w_data, padding_left),
                [u_data, w_data, padding_left](const Tensor& g) {
                  ops::BandedConvGrads grads = ops::banded_conv_backward(u_data, w_data, g, padding_left);
                  return std::vector{grads.du, grads.dw};
                });
}

}  // namespace attn
