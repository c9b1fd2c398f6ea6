// The model presets, named as fairseq's architectures (docs/models.md §1.5, §3.6, §4.4, §5),
// plus teaching sizes (`*_tiny`) that train in minutes on 2 cores. A preset is a complete
// TransformerConfig except the vocabulary sizes, which come from the data.
#include <functional>
#include <utility>

#include <fmt/ranges.h>

#include "core/error.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::nn {
namespace {

void set_width(TransformerConfig& c, int64_t dim, int64_t ffn, int64_t heads) {
  c.encoder_embed_dim = c.decoder_embed_dim = dim;
  c.encoder_ffn_embed_dim = c.decoder_ffn_embed_dim = ffn;
  c.encoder_attention_heads = c.decoder_attention_heads = heads;
}

TransformerConfig transformer_big(double dropout, double attention_dropout, double activation_dropout, bool pre_norm) {
  TransformerConfig c;
  set_width(c, 1024, 4096, 16);
  c.dropout = dropout;
  c.attention_dropout = attention_dropout;
  c.activation_dropout = activation_dropout;
  c.encoder_normalize_before = c.decoder_normalize_before = pre_norm;
  return c;
}

TransformerConfig transformer_tiny() {
  TransformerConfig c;
  set_width(c, 256, 1024, 4);
  c.encoder_layers = c.decoder_layers = 3;
  return c;
}

// The teaching sizes' half width (D 128, F 512, H 4): 2.7x the updates per second of the tiny
// width on two cores, and more BLEU at equal time on the Ding corpus (README "Tuning runs").
TransformerConfig at_mini_width(TransformerConfig c) {
  set_width(c, 128, 512, 4);
  return c;
}

// transformer_tiny at the mini width: at equal training time ~1 BLEU above transformer_tiny.
TransformerConfig transformer_mini() { return at_mini_width(transformer_tiny()); }

// fairseq's `lightconv` base architecture: 7 encoder and 6 decoder conv layers with GLU,
// kernel widths [3, 7, 15, 31, ...], softmax-normalised taps, input dropout 0.1, and
// softmax cross-attention; weight_dropout follows attention_dropout.
TransformerConfig lightconv_base(const std::string& conv_type) {
  TransformerConfig c;
  c.encoder_layers = 7;
  c.encoder_self_mixer = c.decoder_self_mixer = "conv";
  c.encoder_conv_type = c.decoder_conv_type = conv_type;
  return c;
}

TransformerConfig lightconv_iwslt_de_en(const std::string& conv_type) {
  TransformerConfig c = lightconv_base(conv_type);
  set_width(c, 512, 1024, 4);
  c.attention_dropout = c.weight_dropout = 0.1;
  c.encoder_glu = c.decoder_glu = false;
  c.input_dropout = 0.0;
  return c;
}

TransformerConfig lightconv_wmt_en_de_big(const std::string& conv_type) {
  TransformerConfig c = lightconv_base(conv_type);
  set_width(c, 1024, 4096, 16);
  c.dropout = 0.3;
  c.attention_dropout = c.weight_dropout = 0.1;
  return c;
}

// Teaching size: the tiny Transformer's widths with conv blocks of widths 3, 7, 15.
TransformerConfig lightconv_tiny(const std::string& conv_type) {
  TransformerConfig c = transformer_tiny();
  c.encoder_self_mixer = c.decoder_self_mixer = "conv";
  c.encoder_conv_type = c.decoder_conv_type = conv_type;
  c.encoder_kernel_size_list = c.decoder_kernel_size_list = {3, 7, 15};
  return c;
}

// The demo's model: dynamicconv_tiny at transformer_mini's width. With 384-token batches it
// scores ~1.3 BLEU above transformer_mini at equal time on the Ding corpus (README "Tuning runs").
TransformerConfig dynamicconv_mini() { return at_mini_width(lightconv_tiny("dynamic")); }

// Linformer in encoder self-attention and cross-attention (the decoder's self-attention
// must stay causal softmax), as Pampaloni's MT Linformer (§4.4).
TransformerConfig with_linformer(TransformerConfig c, int64_t k) {
  c.encoder_self_mixer = c.cross_mixer = "linformer";
  c.linformer_k = k;
  return c;
}

// Kernelized attention in the decoder's causal self-attention and cross-attention, the
// encoder keeping softmax (T2R's MT setup, docs/models.md §5.4), with T2R's feature sizes:
// 4 (causal) and 32 (cross) — for RFA the number of random features.
TransformerConfig with_kernel_decoder(TransformerConfig c, const std::string& map) {
  c.decoder_self_mixer = c.cross_mixer = "kernel:" + map + "+additive";
  c.causal_proj_dim = 4;
  c.cross_proj_dim = 32;
  return c;
}

// Decaying fast weights in the decoder's self-attention (Mao 2022, docs/models.md §5.6).
TransformerConfig with_decay_decoder(TransformerConfig c) {
  c.decoder_self_mixer = "kernel:identity+decay";
  return c;
}

using Preset = std::pair<const char*, std::function<TransformerConfig()>>;

const std::vector<Preset>& presets() {
  static const std::vector<Preset> table = {
      {"transformer_wmt_en_de", [] { return TransformerConfig{}; }},
      {"transformer_vaswani_wmt_en_de_big", [] { return transformer_big(0.3, 0.0, 0.0, false); }},
      {"transformer_wmt_en_de_big", [] { return transformer_big(0.3, 0.1, 0.0, false); }},
      {"transformer_wmt_en_de_big_t2t", [] { return transformer_big(0.3, 0.1, 0.1, true); }},
      {"transformer_tiny", transformer_tiny},
      {"transformer_mini", transformer_mini},
      {"lightconv_iwslt_de_en", [] { return lightconv_iwslt_de_en("lightweight"); }},
      {"lightconv_wmt_en_de", [] { return lightconv_base("lightweight"); }},
      {"lightconv_wmt_en_de_big", [] { return lightconv_wmt_en_de_big("lightweight"); }},
      {"lightconv_tiny", [] { return lightconv_tiny("lightweight"); }},
      {"dynamicconv_iwslt_de_en", [] { return lightconv_iwslt_de_en("dynamic"); }},
      {"dynamicconv_wmt_en_de", [] { return lightconv_base("dynamic"); }},
      {"dynamicconv_wmt_en_de_big", [] { return lightconv_wmt_en_de_big("dynamic"); }},
      {"dynamicconv_tiny", [] { return lightconv_tiny("dynamic"); }},
      {"dynamicconv_mini", dynamicconv_mini},
      // k = 256 of 1024 positions (fairseq's ratio 4) compresses no MT sentence; the
      // teaching size uses k = 8, below most Ding sentences' length.
      {"linformer_wmt_en_de", [] { return with_linformer(TransformerConfig{}, 256); }},
      {"linformer_tiny", [] { return with_linformer(transformer_tiny(), 8); }},
      // T2R's WMT14 EN-DE rows (its Table 2) are Transformer-big models.
      {"t2r_wmt_en_de_big", [] { return with_kernel_decoder(transformer_big(0.3, 0.1, 0.0, false), "t2r"); }},
      {"elu_wmt_en_de_big", [] { return with_kernel_decoder(transformer_big(0.3, 0.1, 0.0, false), "elu"); }},
      {"rfa_wmt_en_de_big", [] { return with_kernel_decoder(transformer_big(0.3, 0.1, 0.0, false), "rfa"); }},
      {"t2r_tiny", [] { return with_kernel_decoder(transformer_tiny(), "t2r"); }},
      {"elu_tiny", [] { return with_kernel_decoder(transformer_tiny(), "elu"); }},
      {"rfa_tiny", [] { return with_kernel_decoder(transformer_tiny(), "rfa"); }},
      {"decay_tiny", [] { return with_decay_decoder(transformer_tiny()); }},
  };
  return table;
}

}  // namespace

std::vector<std::string> transformer_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : presets()) names.push_back(name);
  return names;
}

TransformerConfig transformer_preset(const std::string& name) {
  for (const auto& [preset_name, make] : presets())
    if (name == preset_name) {
      TransformerConfig c = make();
      c.arch = name;
      return c;
    }
  throw Error(fmt::format("unknown model preset '{}' (known: {})", name, fmt::join(transformer_preset_names(), ", ")));
}

}  // namespace attn::nn
