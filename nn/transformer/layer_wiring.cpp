// Config → mixer options and sublayer names. See layer_wiring.hpp.
#include "nn/transformer/layer_wiring.hpp"

namespace attn::nn {
namespace {

// The registry's kind of a config kind: "conv" is LightConv or DynamicConv by conv type.
std::string registry_kind(const std::string& kind, const std::string& conv_type) {
  if (kind != "conv") return kind;
  return conv_type == "lightweight" ? "lightconv" : "dynamicconv";
}

bool is_conv(const MixerOptions& o) { return o.kind == "lightconv" || o.kind == "dynamicconv"; }

ConvOptions conv_options(const TransformerConfig& c, bool encoder, int64_t layer) {
  const std::vector<int64_t>& kernels = encoder ? c.encoder_kernel_size_list : c.decoder_kernel_size_list;
  ConvOptions o;
  o.kernel_size = kernels.size() == 1 ? kernels.front() : kernels.at(size_t(layer));
  o.conv_dim = encoder ? c.encoder_conv_dim : c.decoder_conv_dim;
  o.glu = encoder ? c.encoder_glu : c.decoder_glu;
  o.weight_softmax = c.weight_softmax;
  o.weight_dropout = c.weight_dropout;
  o.input_dropout = c.input_dropout;
  o.fairseq_softmax_span = c.fairseq_dynamic_softmax_span;
  return o;
}

LinformerOptions linformer_options(const TransformerConfig& c) {
  LinformerOptions o;
  o.max_seq_len = c.max_source_positions;
  o.k = linformer_projected_length(c);
  o.shared_kv = c.shared_kv_compressed;
  o.shared_layer = c.shared_layer_kv_compressed;
  o.freeze = c.freeze_compress;
  o.xavier_init = c.linformer_xavier_init;
  return o;
}

}  // namespace

MixerOptions mixer_options(const TransformerConfig& c, MixerPlace place, int64_t layer, std::shared_ptr<Module> shared) {
  const bool encoder = place == MixerPlace::EncoderSelf;
  const std::string& kinds = encoder ? c.encoder_self_mixer
                             : place == MixerPlace::DecoderSelf ? c.decoder_self_mixer
                                                                : c.cross_mixer;
  MixerOptions o;
  o.kind = registry_kind(mixer_kind_of_layer(kinds, layer), encoder ? c.encoder_conv_type : c.decoder_conv_type);
  o.embed_dim = encoder ? c.encoder_embed_dim : c.decoder_embed_dim;
  o.num_heads = encoder ? c.encoder_attention_heads : c.decoder_attention_heads;
  o.attention_dropout = c.attention_dropout;
  o.cross_attention = place == MixerPlace::Cross;
  o.layer = layer;
  if (is_conv(o)) o.conv = conv_options(c, encoder, layer);
  if (o.kind == "linformer") o.linformer = linformer_options(c);
  o.kernel.feature_size = place == MixerPlace::DecoderSelf ? c.causal_proj_dim : c.cross_proj_dim;
  o.kernel.dpfp_rolls = c.dpfp_rolls;
  o.kernel.redraw = c.redraw_random_features;
  o.kernel.draw_stream = 3 * uint64_t(layer) + uint64_t(place);
  o.shared = std::move(shared);
  return o;
}

StackShared stack_shared_module(const TransformerConfig& c, MixerPlace place, int64_t layers) {
  for (int64_t layer = 0; layer < layers; ++layer) {
    StackShared shared = create_stack_shared(mixer_options(c, place, layer));
    if (shared.module) return shared;
  }
  return {};
}

SublayerNames encoder_sublayer_names(const MixerOptions& self) {
  if (is_conv(self)) return {"", "layer_norms.0", "layer_norms.1"};
  return {"self_attn", "self_attn_layer_norm", "final_layer_norm"};
}

SublayerNames decoder_self_sublayer_names(const MixerOptions& self) {
  if (is_conv(self)) return {"", "conv_layer_norm", "final_layer_norm"};
  return {"self_attn", "self_attn_layer_norm", "final_layer_norm"};
}

}  // namespace attn::nn
