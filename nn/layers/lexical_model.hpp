// The lexical model of Nguyen & Chiang (2018), §3, for a shared output matrix (docs/models.md
// §1.2.2): a shortcut from the source words to the output. At each target position the source
// embeddings are averaged with the last decoder layer's cross-attention weights (the heads'
// mean) and mapped by one layer,
//
//   f_t = tanh(Σ_s ā_ts · e_s)        e_s = √D·E[x_s], the encoder's scaled token embeddings
//   h_t = tanh(W f_t)                 W [D, D], no bias, zero at the start
//
// and h_t is added to the output projection's input, so the logits are W_out·(s_t + h_t): the
// softmax sees a translation of the attended words themselves, not only what the layers made
// of them. The paper's residual h_t = tanh(W f_t) + f_t scores the source words themselves when
// W_out is the joined embedding, and lost 1.2 BLEU on the demo (this form 0.55: README "Tuning
// runs"); W starts at zero so that a model starts as it would without the term. The weights ā
// enter as given (the attention's probabilities carry no gradient), so the term trains W and
// the embeddings; the attention is trained by the main path.
#pragma once
#include <memory>

#include "nn/layers/linear.hpp"

namespace attn::nn {

class LexicalModel : public Module {
 public:
  explicit LexicalModel(int64_t dim);
  // attention [B, T, S] (rows sum to 1 over the real source positions), source_embeddings
  // [B, S, D] -> h [B, T, D].
  Tensor forward(const Tensor& attention, const Tensor& source_embeddings) const;

  std::shared_ptr<Linear> proj;  // W
};

}  // namespace attn::nn
