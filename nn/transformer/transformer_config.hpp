// Configuration of the encoder–decoder Transformer (SPEC-MODELS.md §1.2–1.5, §2): every
// field of fairseq's `transformer` architecture that changes the model, with fairseq's
// argument names, the presets of §1.5 plus `transformer_tiny` for teaching runs, a JSON
// round trip (saved beside checkpoints) and "key=value" overrides (CLI flags).
//
// Token mixers are named per place (DESIGN.md §4): encoder self-attention, decoder
// self-attention and encoder–decoder (cross) attention each take a kind string understood
// by nn/mixers/mixer_registry.hpp ("softmax", later "linformer", "kernel:elu+additive", ...).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::nn {

struct TransformerConfig {
  std::string arch = "transformer_wmt_en_de";

  // Vocabulary: full fairseq dictionaries including the specials (§1.1); set from the data.
  int64_t src_vocab_size = 0;
  int64_t tgt_vocab_size = 0;
  int64_t padding_idx = 1;
  int64_t eos_idx = 2;

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

  bool share_all_embeddings = false;               // E_enc = E_dec = output matrix (joined dictionary)
  bool share_decoder_input_output_embed = false;   // logits = h E_decᵀ, no bias
  bool no_scale_embedding = false;                 // drop the √D embedding scale
  int64_t max_source_positions = 1024;
  int64_t max_target_positions = 1024;
  // FFN initialisation (§1.4): "xavier" (fairseq 2018–2019) or "torch" (PyTorch default, fairseq ≥ 2020).
  std::string ffn_init = "xavier";

  // Token mixer of each place (nn/mixers/mixer_registry.hpp).
  std::string encoder_self_mixer = "softmax";
  std::string decoder_self_mixer = "softmax";
  std::string cross_mixer = "softmax";
  // Extra variant options passed to every mixer factory ("linformer_k" -> "256", ...).
  std::map<std::string, std::string> mixer_options;

  // Throws attn::Error naming the field when the configuration cannot build a model
  // (non-positive sizes, D not divisible by H, shared embeddings with different vocabularies, ...).
  void validate() const;
};

// Names of the presets: transformer_wmt_en_de, transformer_vaswani_wmt_en_de_big,
// transformer_wmt_en_de_big, transformer_wmt_en_de_big_t2t, transformer_tiny.
std::vector<std::string> transformer_preset_names();
// The preset's configuration (vocabulary sizes still 0); throws listing the known names.
TransformerConfig transformer_preset(const std::string& name);

// Sets one field from "key=value" (key in fairseq spelling, '-' or '_', e.g.
// "encoder-layers=3", "share_all_embeddings=true", "mixer_options.linformer_k=64").
// Throws on an unknown key or a value that does not parse for that field.
void apply_override(TransformerConfig& config, const std::string& key_value);
void apply_overrides(TransformerConfig& config, const std::vector<std::string>& key_values);

nlohmann::json to_json(const TransformerConfig& config);
// Fields missing from the JSON keep their defaults; unknown keys are rejected.
TransformerConfig config_from_json(const nlohmann::json& j);

}  // namespace attn::nn
