#include "nn/transformer/encoder_layer.hpp"

#include "nn/transformer/layer_wiring.hpp"

namespace attn::nn {

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerConfig& c, int64_t layer,
                                                 std::shared_ptr<Module> shared)
    : ffn(c.encoder_embed_dim, c.encoder_ffn_embed_dim, c.activation_dropout, ffn_linear_init(c), c.ffn_glu),
      dropout_(c.dropout),
      normalize_before_(c.encoder_normalize_before) {
  const int64_t dim = c.encoder_embed_dim;
  const MixerOptions options = mixer_options(c, MixerPlace::EncoderSelf, layer, std::move(shared));
  const SublayerNames names = encoder_sublayer_names(options);
  self_attn = register_module(names.mixer, create_mixer(options));
  self_attn_layer_norm = register_module(names.mixer_norm, make_normalization(c.scale_norm, dim));
  register_module("fc1", ffn.fc1);
  register_module("fc2", ffn.fc2);
  final_layer_norm = register_module(names.ffn_norm, make_normalization(c.scale_norm, dim));
}

Tensor TransformerEncoderLayer::forward(const Tensor& x, const Tensor& padding_mask, Tensor* attention) {
  MixerContext ctx;
  ctx.key_padding_mask = padding_mask;
  ctx.attention_weights = attention;
  const bool training = is_training();
  Tensor h = residual_block(x, *self_attn_layer_norm, normalize_before_, dropout_, training,
                            [&](const Tensor& in) { return self_attn->forward(in, ctx); });
  return residual_block(h, *final_layer_norm, normalize_before_, dropout_, training,
                        [&](const Tensor& in) { return ffn.forward(in, training); });
}

}  // namespace attn::nn
