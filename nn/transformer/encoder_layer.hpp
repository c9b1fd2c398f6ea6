// One encoder layer (docs/models.md §1.4, §3.3): a token mixer (softmax or Linformer
// self-attention, or a LightConv/DynamicConv block; docs/design.md §4) then FFN, each wrapped
// post-norm  x ← LN(x + Dropout(f(x)))  or pre-norm  x ← x + Dropout(f(LN(x))). fairseq
// names (layer_wiring.hpp): self_attn, self_attn_layer_norm, fc1, fc2, final_layer_norm; a
// conv layer: linear1, conv, linear2, layer_norms.0, fc1, fc2, layer_norms.1.
#pragma once
#include <memory>

#include "nn/layers/feed_forward.hpp"
#include "nn/layers/normalization.hpp"
#include "nn/mixers/token_mixer.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::nn {

class TransformerEncoderLayer : public Module {
 public:
  // `layer`: the index in the stack (per-layer mixer kinds and kernel sizes); `shared`: the
  // stack's module shared by every layer's mixer, if the family has one.
  TransformerEncoderLayer(const TransformerConfig& config, int64_t layer, std::shared_ptr<Module> shared = nullptr);
  // x [B, S, D]; padding_mask Bool [B, S] or undefined; attention (optional) receives [B, H, S, S].
  Tensor forward(const Tensor& x, const Tensor& padding_mask, Tensor* attention = nullptr);

  std::shared_ptr<TokenMixer> self_attn;
  std::shared_ptr<Normalization> self_attn_layer_norm;
  FeedForward ffn;
  std::shared_ptr<Normalization> final_layer_norm;

 private:
  double dropout_;
  bool normalize_before_;
};

}  // namespace attn::nn
