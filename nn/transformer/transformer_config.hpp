// Configuration of the encoder–decoder Transformer (docs/models.md §1.2–1.5, §2): every
// field of fairseq's `transformer` architecture that changes the model, with fairseq's
// argument names, the presets of §1.5 plus `transformer_tiny` for teaching runs, a JSON
// round trip (saved beside checkpoints) and "key=value" overrides (CLI flags).
//
// Token mixers are named per place (docs/design.md §4): encoder self-attention, decoder
// self-attention and encoder–decoder (cross) attention each take a kind string understood
// by nn/mixers/mixer_registry.hpp ("softmax", later "linformer", "kernel:elu+additive", ...).
#pragma once
#include <string_view>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace attn::nn {

struct TransformerConfig {
  std::string arch = "transformer_wmt_en_de";

  // Vocabulary: full fairseq dictionaries including the specials (§1.1); set from the data.
  int64_t src_vocab_size = 0;
  int64_t tgt_vocab_size = 0;
  int64_t padding_idx = 1;
  int64_t eos_idx = 2;
  int64_t unk_idx = 3;  // the target's <unk>: what --unkpen penalises (nn/search)

  int64_t encoder_embed_dim = 512;
  int64_t encoder_ffn_embed_dim = 2048;
  int64_t encoder_layers = 6;
  int64_t encoder_attention_heads = 8;
  bool encoder_normalize_before = false;  // pre-norm (§1.4); adds a final LN after the stack
  bool encoder_learned_pos = false;

  int64_t decoder_embed_dim = 512;
  int64_t decoder_ffn_embed_dim = 2048;
  int64_t decoder_layers = 6;
  int64_t decoder_attention_heads = 8;
  bool decoder_normalize_before = false;
  bool decoder_learned_pos = false;
  bool no_decoder_final_norm = false;  // pre-norm only: drop the decoder's final LN

  double dropout = 0.1;
  double attention_dropout = 0.0;
  double activation_dropout = 0.0;
  double source_word_dropout = 0.0;  // whole source token embeddings dropped (§1.2.1)
  double target_word_dropout = 0.0;  // whole previous-target token embeddings dropped

  bool share_all_embeddings = false;               // E_enc = E_dec = output matrix (joined dictionary)
  bool share_decoder_input_output_embed = false;   // logits = h E_decᵀ, no bias
  bool no_scale_embedding = false;                 // drop the √D embedding scale
  bool scale_norm = false;  // ScaleNorm in place of every LayerNorm (docs/models.md §1.4.1)
  bool fix_norm = false;    // FixNorm: token embeddings and output rows at unit length (§1.4.1)
  bool lexical_model = false;  // the output also reads the attended source embeddings (§1.2.2)
  int64_t max_source_positions = 1024;
  int64_t max_target_positions = 1024;
  // FFN initialisation (§1.4): "xavier" (fairseq 2018–2019) or "torch" (PyTorch default, fairseq ≥ 2020).
  std::string ffn_init = "xavier";
  bool ffn_glu = false;  // gated FFN, u ⊙ GELU(g) (GEGLU, §1.4)

  // Token mixer of each place (nn/mixers/mixer_registry.hpp): one kind for every layer of
  // the stack, or a comma-separated list with one kind per layer ("conv,conv,conv,softmax").
  // Kinds: softmax, linformer (encoder self and cross only), conv (LightConv/DynamicConv
  // block, its type from {encoder,decoder}_conv_type), kernel:<map>+<rule> (kernelized and
  // decaying attention; gated, decay and delta rules in decoder self-attention only).
  std::string encoder_self_mixer = "softmax";
  std::string decoder_self_mixer = "softmax";
  std::string cross_mixer = "softmax";

  // ---- Variant options (saved under "mixer_options" in the JSON; fairseq's names) ----
  // LightConv / DynamicConv (docs/models.md §3; fairseq models/lightconv.py).
  std::string encoder_conv_type = "dynamic";  // lightweight | dynamic
  std::string decoder_conv_type = "dynamic";
  std::vector<int64_t> encoder_kernel_size_list = {3, 7, 15, 31, 31, 31, 31};  // one per layer, or one for all
  std::vector<int64_t> decoder_kernel_size_list = {3, 7, 15, 31, 31, 31};
  int64_t encoder_conv_dim = 0;  // 0: encoder_embed_dim
  int64_t decoder_conv_dim = 0;  // 0: decoder_embed_dim
  bool encoder_glu = true;
  bool decoder_glu = true;
  bool weight_softmax = true;
  double weight_dropout = 0.0;
  double input_dropout = 0.1;
  // DynamicConv: renormalise over the last T taps of the padded length, as fairseq does (to
  // reproduce its checkpoints); default off: a sentence's output depends on it alone.
  bool fairseq_dynamic_softmax_span = false;
  // Linformer (docs/models.md §4): E, F ∈ ℝ^{k×max_source_positions}.
  int64_t compressed = 4;           // k = max_source_positions / compressed ...
  int64_t linformer_k = 0;          // ... unless this is > 0
  bool shared_kv_compressed = false;
  bool shared_layer_kv_compressed = false;
  bool freeze_compress = false;
  bool linformer_xavier_init = false;  // default: PyTorch's Linear init
  // Kernelized attention (docs/models.md §5; the T2R code's names): T2R's feature size m, or
  // RFA's number of random features, for decoder self-attention and for the other places.
  int64_t causal_proj_dim = 4;
  int64_t cross_proj_dim = 32;
  int64_t dpfp_rolls = 2;  // DPFP's ν
  bool redraw_random_features = true;  // RFA, Performer: fresh random features at every training forward

  // Throws attn::Error naming the field when the configuration cannot build a model
  // (non-positive sizes, D not divisible by H, shared embeddings with different vocabularies,
  // ...) or one too large to build: more than 1024 layers, a size above 2^24, or about 2^32
  // numbers in all, each error naming the field or the bound.
  void validate() const;
};

// Linformer's k: linformer_k when set, else max_source_positions / compressed.
int64_t linformer_projected_length(const TransformerConfig& config);

// The kind of a place's mixer in one layer: the single kind, or the layer's entry of a list.
std::string mixer_kind_of_layer(const std::string& mixers, int64_t layer);

// The presets (nn/transformer/presets.cpp): transformer_wmt_en_de, ..., transformer_tiny, transformer_mini,
// lightconv_* / dynamicconv_* (iwslt_de_en, wmt_en_de, wmt_en_de_big, tiny), dynamicconv_mini, linformer_*.
std::vector<std::string> transformer_preset_names();
// The preset's configuration (vocabulary sizes still 0); throws listing the known names.
TransformerConfig transformer_preset(const std::string& name);

// A field that a command-line flag sets (in fairseq's spelling, '--encoder-kernel-size-list').
struct ConfigFlag {
  std::string name;  // field name, '_' spelling
  bool is_switch;    // a flag without value that sets true (fairseq's store_true)
  std::string help;
};
// Every model flag of `attnlab train`, generated from the same table as JSON and overrides.
const std::vector<ConfigFlag>& config_flags();

// Sets one field from "key=value" (key in fairseq spelling, '-' or '_', e.g.
// "encoder-layers=3", "share_all_embeddings=true", "encoder-kernel-size-list=[3,7,15]").
// Throws on an unknown key or a value that does not parse for that field.
void apply_override(TransformerConfig& config, const std::string& key_value);
void apply_overrides(TransformerConfig& config, const std::vector<std::string>& key_values);
// What is wrong with `text` as the value of the field `key` (spelt as for apply_override),
// without naming the field: "must be an integer, got '1.5'", or for a mixer a kind its place
// cannot take; empty when nothing is. What depends on other fields (a mixer list's length
// against the layers) is left to validate(). `attnlab train` checks its model flags with it.
std::string config_value_problem(const std::string& key, const std::string& text);

nlohmann::json to_json(const TransformerConfig& config);
// The fields in which two configurations differ, one "name: A vs B" each (empty when equal).
std::vector<std::string> config_differences(const TransformerConfig& a, const TransformerConfig& b);
// The configuration to_json() wrote: each field with its type (an integer field an integer in
// range, not 16.5 or 1e30), unknown keys rejected, each error naming the field. The sizes
// recorded since the format began must be there; a field added later keeps its default when
// missing (a checkpoint from before it). Sizes are checked by validate(), not here.
TransformerConfig config_from_json(const nlohmann::json& j);

}  // namespace attn::nn
