// Shared by the encoder and decoder layers: how one layer's pieces are built from the
// config, and the residual wiring of docs/models.md §1.4:
//   post-norm  x ← LN(x + Dropout(f(x)))
//   pre-norm   x ← x + Dropout(f(LN(x)))
#pragma once
#include <memory>
#include <string>

#include "nn/layers/feed_forward.hpp"
#include "nn/layers/normalization.hpp"
#include "nn/mixers/mixer_registry.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::nn {

inline LinearInit ffn_linear_init(const TransformerConfig& c) {
  return c.ffn_init == "torch" ? LinearInit::TorchDefault : LinearInit::Xavier;
}

// The three places a token mixer serves.
enum class MixerPlace { EncoderSelf, DecoderSelf, Cross };

// The options of the mixer of `place` in layer `layer` of its stack, parsed from the config
// (the one place where config fields become typed mixer options). `shared` is the stack's
// shared module for the family, if any (Linformer's layerwise E).
MixerOptions mixer_options(const TransformerConfig& c, MixerPlace place, int64_t layer,
                           std::shared_ptr<Module> shared = nullptr);

// The module shared by the mixers of `place` across the stack's `layers` layers (e.g.
// Linformer's layerwise E), built from the first layer whose family has one; the stack
// registers it under its name. Null module when none.
StackShared stack_shared_module(const TransformerConfig& c, MixerPlace place, int64_t layers);

// fairseq's module names of a layer's mixer sublayer, which differ between families: a
// Transformer layer has `self_attn` and `self_attn_layer_norm`; a LightConv layer holds its
// conv block inline (`linear1`, `conv`, `linear2`) with `conv_layer_norm` in the decoder, and
// in the encoder `layer_norms.0` (conv) and `layer_norms.1` (FFN).
struct SublayerNames {
  std::string mixer;       // "" registers the mixer inline
  std::string mixer_norm;  // the normalisation of the mixer's residual block
  std::string ffn_norm;    // the normalisation of the FFN's residual block
};
SublayerNames encoder_sublayer_names(const MixerOptions& self);
SublayerNames decoder_self_sublayer_names(const MixerOptions& self);

// The residual add and the dropout before it run as one fused op (attn::dropout_add).
template <typename Sublayer>
Tensor residual_block(const Tensor& x, const Normalization& norm, bool normalize_before, double dropout_p, bool training,
                      Sublayer&& f) {
  if (normalize_before) return dropout_add(f(norm.forward(x)), x, dropout_p, training);
  return norm.forward(dropout_add(f(x), x, dropout_p, training));
}

}  // namespace attn::nn
