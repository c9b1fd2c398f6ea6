// Position-wise feed-forward block fc2(ActDrop(ReLU(fc1 x))) (docs/models.md §1.4).
// fc1 and the ReLU run as one fused op (attn::linear_relu: bias and ReLU in one pass).
// Gated (GEGLU, Shazeer 2020 eq. 6): fc1 gives [u, g] of 2F, and the block is
// fc2(ActDrop(u ⊙ GELU(g))).
// The sub-modules are named fc1/fc2 as in fairseq's layers; the owner registers them
// directly on the layer so state-dict names are `...layers.N.fc1.weight`.
#pragma once
#include <memory>

#include "nn/layers/linear.hpp"

namespace attn::nn {

struct FeedForward {
  std::shared_ptr<Linear> fc1;  // [F, D]
  std::shared_ptr<Linear> fc2;  // [D, F]
  double activation_dropout = 0.0;
  bool gated = false;

  FeedForward(int64_t dim, int64_t ffn_dim, double activation_dropout, LinearInit init, bool gated = false);
  Tensor forward(const Tensor& x, bool training) const;
};

}  // namespace attn::nn
