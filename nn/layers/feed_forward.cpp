#include "nn/layers/feed_forward.hpp"

namespace attn::nn {

FeedForward::FeedForward(int64_t dim, int64_t ffn_dim, double act_dropout, LinearInit init)
    : fc1(std::make_shared<Linear>(dim, ffn_dim, true, init)),
      fc2(std::make_shared<Linear>(ffn_dim, dim, true, init)),
      activation_dropout(act_dropout) {}

Tensor FeedForward::forward(const Tensor& x, bool training) const {
  Tensor h = fc1->forward_relu(x);
  return fc2->forward(dropout(h, activation_dropout, training));
}

}  // namespace attn::nn
