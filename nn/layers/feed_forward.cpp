#include "nn/layers/feed_forward.hpp"

namespace attn::nn {

FeedForward::FeedForward(int64_t dim, int64_t ffn_dim, double act_dropout, LinearInit init, bool gated_)
    : fc1(std::make_shared<Linear>(dim, gated_ ? 2 * ffn_dim : ffn_dim, true, init)),
      fc2(std::make_shared<Linear>(ffn_dim, dim, true, init)),
      activation_dropout(act_dropout),
      gated(gated_) {}

Tensor FeedForward::forward(const Tensor& x, bool training) const {
  Tensor h;
  if (gated) {
    const std::vector<Tensor> value_gate = chunk(fc1->forward(x), 2, -1);
    h = value_gate[0] * gelu(value_gate[1]);
  } else {
    h = fc1->forward_relu(x);
  }
  return fc2->forward(dropout(h, activation_dropout, training));
}

}  // namespace attn::nn
