// Shared by the encoder and decoder layers: how one layer's pieces are built from the
// config, and the residual wiring of SPEC-MODELS.md §1.4:
//   post-norm  x ← LN(x + Dropout(f(x)))
//   pre-norm   x ← x + Dropout(f(LN(x)))
#pragma once
#include <memory>
#include <string>

#include "nn/layers/feed_forward.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/mixers/mixer_registry.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::nn {

inline LinearInit ffn_linear_init(const TransformerConfig& c) {
  return c.ffn_init == "torch" ? LinearInit::TorchDefault : LinearInit::Xavier;
}

inline MixerOptions mixer_options(const TransformerConfig& c, const std::string& kind, int64_t dim, int64_t heads,
                                  bool cross) {
  MixerOptions o;
  o.kind = kind;
  o.embed_dim = dim;
  o.num_heads = heads;
  o.attention_dropout = c.attention_dropout;
  o.cross_attention = cross;
  return o;
}

// The residual add and the dropout before it run as one fused op (attn::dropout_add).
template <typename Sublayer>
Tensor residual_block(const Tensor& x, const LayerNorm& norm, bool normalize_before, double dropout_p, bool training,
                      Sublayer&& f) {
  if (normalize_before) return dropout_add(f(norm.forward(x)), x, dropout_p, training);
  return norm.forward(dropout_add(f(x), x, dropout_p, training));
}

}  // namespace attn::nn
