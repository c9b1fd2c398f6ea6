#include "nn/transformer/decoder_layer.hpp"

#include "nn/transformer/layer_wiring.hpp"

namespace attn::nn {

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerConfig& c, int64_t layer,
                                                 std::shared_ptr<Module> cross_shared)
    : ffn(c.decoder_embed_dim, c.decoder_ffn_embed_dim, c.activation_dropout, ffn_linear_init(c), c.ffn_glu),
      dropout_(c.dropout),
      normalize_before_(c.decoder_normalize_before) {
  const int64_t dim = c.decoder_embed_dim;
  const MixerOptions self = mixer_options(c, MixerPlace::DecoderSelf, layer);
  const SublayerNames names = decoder_self_sublayer_names(self);
  self_attn = register_module(names.mixer, create_mixer(self));
  self_attn_layer_norm = register_module(names.mixer_norm, make_normalization(c.scale_norm, dim));
  encoder_attn = register_module("encoder_attn",
                                 create_mixer(mixer_options(c, MixerPlace::Cross, layer, std::move(cross_shared))));
  encoder_attn_layer_norm = register_module("encoder_attn_layer_norm", make_normalization(c.scale_norm, dim));
  register_module("fc1", ffn.fc1);
  register_module("fc2", ffn.fc2);
  final_layer_norm = register_module(names.ffn_norm, make_normalization(c.scale_norm, dim));
}

template <typename SelfAttention, typename CrossAttention>
Tensor TransformerDecoderLayer::run_sublayers(const Tensor& x, SelfAttention&& self_attention,
                                              CrossAttention&& cross_attention) {
  const bool training = is_training();
  Tensor h = residual_block(x, *self_attn_layer_norm, normalize_before_, dropout_, training, self_attention);
  h = residual_block(h, *encoder_attn_layer_norm, normalize_before_, dropout_, training, cross_attention);
  return residual_block(h, *final_layer_norm, normalize_before_, dropout_, training,
                        [&](const Tensor& in) { return ffn.forward(in, training); });
}

Tensor TransformerDecoderLayer::forward(const Tensor& x, const Tensor& self_padding_mask, const Tensor& memory,
                                        const Tensor& memory_padding_mask, Tensor* self_attention,
                                        Tensor* cross_attention) {
  MixerContext self_ctx;
  self_ctx.key_padding_mask = self_padding_mask;
  self_ctx.causal = true;
  self_ctx.attention_weights = self_attention;
  MixerContext cross_ctx;
  cross_ctx.memory = memory;
  cross_ctx.key_padding_mask = memory_padding_mask;
  cross_ctx.attention_weights = cross_attention;
  return run_sublayers(
      x, [&](const Tensor& in) { return self_attn->forward(in, self_ctx); },
      [&](const Tensor& in) { return encoder_attn->forward(in, cross_ctx); });
}

DecoderLayerState TransformerDecoderLayer::init_state(int64_t batch, const Tensor& memory,
                                                      const Tensor& memory_padding_mask) {
  MixerContext self_ctx;
  self_ctx.causal = true;
  MixerContext cross_ctx;
  cross_ctx.memory = memory;
  cross_ctx.key_padding_mask = memory_padding_mask;
  return {self_attn->init_state(batch, self_ctx), encoder_attn->init_state(batch, cross_ctx)};
}

Tensor TransformerDecoderLayer::step(const Tensor& x, DecoderLayerState& state, const Tensor& memory_padding_mask,
                                     Tensor* cross_attention) {
  MixerContext self_ctx;
  self_ctx.causal = true;
  MixerContext cross_ctx;
  cross_ctx.key_padding_mask = memory_padding_mask;
  cross_ctx.attention_weights = cross_attention;
  return run_sublayers(
      x, [&](const Tensor& in) { return self_attn->step(in, *state.self_attn, self_ctx); },
      [&](const Tensor& in) { return encoder_attn->step(in, *state.encoder_attn, cross_ctx); });
}

void TransformerDecoderLayer::reorder(DecoderLayerState& state, const Tensor& order) {
  self_attn->reorder(*state.self_attn, order);
  encoder_attn->reorder(*state.encoder_attn, order);
}

}  // namespace attn::nn
