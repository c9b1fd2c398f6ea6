#include "nn/transformer/transformer_config.hpp"

#include <algorithm>
#include <variant>

#include <fmt/ranges.h>

#include "core/error.hpp"

namespace attn::nn {
namespace {

using FieldPointer = std::variant<int64_t TransformerConfig::*, double TransformerConfig::*,
                                  bool TransformerConfig::*, std::string TransformerConfig::*>;
struct Field {
  const char* name;
  FieldPointer pointer;
};

// Every scalar field, in fairseq spelling: the single table behind JSON and overrides.
const std::vector<Field>& fields() {
  using C = TransformerConfig;
  static const std::vector<Field> table = {
      {"arch", &C::arch},
      {"src_vocab_size", &C::src_vocab_size},
      {"tgt_vocab_size", &C::tgt_vocab_size},
      {"padding_idx", &C::padding_idx},
      {"eos_idx", &C::eos_idx},
      {"encoder_embed_dim", &C::encoder_embed_dim},
      {"encoder_ffn_embed_dim", &C::encoder_ffn_embed_dim},
      {"encoder_layers", &C::encoder_layers},
      {"encoder_attention_heads", &C::encoder_attention_heads},
      {"encoder_normalize_before", &C::encoder_normalize_before},
      {"encoder_learned_pos", &C::encoder_learned_pos},
      {"decoder_embed_dim", &C::decoder_embed_dim},
      {"decoder_ffn_embed_dim", &C::decoder_ffn_embed_dim},
      {"decoder_layers", &C::decoder_layers},
      {"decoder_attention_heads", &C::decoder_attention_heads},
      {"decoder_normalize_before", &C::decoder_normalize_before},
      {"decoder_learned_pos", &C::decoder_learned_pos},
      {"no_decoder_final_norm", &C::no_decoder_final_norm},
      {"dropout", &C::dropout},
      {"attention_dropout", &C::attention_dropout},
      {"activation_dropout", &C::activation_dropout},
      {"share_all_embeddings", &C::share_all_embeddings},
      {"share_decoder_input_output_embed", &C::share_decoder_input_output_embed},
      {"no_scale_embedding", &C::no_scale_embedding},
      {"max_source_positions", &C::max_source_positions},
      {"max_target_positions", &C::max_target_positions},
      {"ffn_init", &C::ffn_init},
      {"encoder_self_mixer", &C::encoder_self_mixer},
      {"decoder_self_mixer", &C::decoder_self_mixer},
      {"cross_mixer", &C::cross_mixer},
  };
  return table;
}

constexpr const char* kMixerOptionsKey = "mixer_options";

const Field* find_field(const std::string& name) {
  auto it = std::find_if(fields().begin(), fields().end(), [&](const Field& f) { return name == f.name; });
  return it == fields().end() ? nullptr : &*it;
}

std::vector<std::string> field_names() {
  std::vector<std::string> names;
  for (const Field& f : fields()) names.push_back(f.name);
  names.push_back(std::string(kMixerOptionsKey) + ".<name>");
  return names;
}

bool parse_bool(const std::string& key, const std::string& text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  throw Error(fmt::format("config: '{}' expects true/false, got '{}'", key, text));
}

template <typename Number, typename Parse>
Number parse_number(const std::string& key, const std::string& text, Parse parse) {
  size_t used = 0;
  Number value{};
  try {
    value = parse(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  ATTN_CHECK(used == text.size() && !text.empty(), "config: '{}' expects a number, got '{}'", key, text);
  return value;
}

void set_from_text(TransformerConfig& c, const Field& f, const std::string& text) {
  std::visit(
      [&](auto pointer) {
        using T = std::decay_t<decltype(c.*pointer)>;
        if constexpr (std::is_same_v<T, bool>) c.*pointer = parse_bool(f.name, text);
        else if constexpr (std::is_same_v<T, int64_t>)
          c.*pointer = parse_number<int64_t>(f.name, text, [](const std::string& s, size_t* n) { return std::stoll(s, n); });
        else if constexpr (std::is_same_v<T, double>)
          c.*pointer = parse_number<double>(f.name, text, [](const std::string& s, size_t* n) { return std::stod(s, n); });
        else c.*pointer = text;
      },
      f.pointer);
}

void set_from_json(TransformerConfig& c, const Field& f, const nlohmann::json& value) {
  std::visit(
      [&](auto pointer) {
        using T = std::decay_t<decltype(c.*pointer)>;
        try {
          c.*pointer = value.get<T>();
        } catch (const nlohmann::json::exception&) {
          throw Error(fmt::format("config: field '{}' has the wrong JSON type: {}", f.name, value.dump()));
        }
      },
      f.pointer);
}

std::string normalized_key(std::string key) {
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

TransformerConfig big_preset(const std::string& arch, double dropout, double attention_dropout,
                             double activation_dropout, bool pre_norm) {
  TransformerConfig c;
  c.arch = arch;
  c.encoder_embed_dim = c.decoder_embed_dim = 1024;
  c.encoder_ffn_embed_dim = c.decoder_ffn_embed_dim = 4096;
  c.encoder_attention_heads = c.decoder_attention_heads = 16;
  c.dropout = dropout;
  c.attention_dropout = attention_dropout;
  c.activation_dropout = activation_dropout;
  c.encoder_normalize_before = c.decoder_normalize_before = pre_norm;
  return c;
}

TransformerConfig tiny_preset() {
  TransformerConfig c;
  c.arch = "transformer_tiny";
  c.encoder_embed_dim = c.decoder_embed_dim = 256;
  c.encoder_ffn_embed_dim = c.decoder_ffn_embed_dim = 1024;
  c.encoder_attention_heads = c.decoder_attention_heads = 4;
  c.encoder_layers = c.decoder_layers = 3;
  c.dropout = 0.1;
  return c;
}

}  // namespace

void TransformerConfig::validate() const {
  auto positive = [](const char* name, int64_t v) { ATTN_CHECK(v > 0, "config: {} must be positive, got {}", name, v); };
  positive("src_vocab_size", src_vocab_size);
  positive("tgt_vocab_size", tgt_vocab_size);
  positive("encoder_embed_dim", encoder_embed_dim);
  positive("decoder_embed_dim", decoder_embed_dim);
  positive("encoder_ffn_embed_dim", encoder_ffn_embed_dim);
  positive("decoder_ffn_embed_dim", decoder_ffn_embed_dim);
  positive("encoder_attention_heads", encoder_attention_heads);
  positive("decoder_attention_heads", decoder_attention_heads);
  positive("max_source_positions", max_source_positions);
  positive("max_target_positions", max_target_positions);
  ATTN_CHECK(encoder_layers >= 0 && decoder_layers > 0, "config: need encoder_layers >= 0 and decoder_layers > 0, got {} and {}",
             encoder_layers, decoder_layers);
  ATTN_CHECK(encoder_embed_dim % encoder_attention_heads == 0,
             "config: encoder_embed_dim {} is not divisible by encoder_attention_heads {}", encoder_embed_dim,
             encoder_attention_heads);
  ATTN_CHECK(decoder_embed_dim % decoder_attention_heads == 0,
             "config: decoder_embed_dim {} is not divisible by decoder_attention_heads {}", decoder_embed_dim,
             decoder_attention_heads);
  ATTN_CHECK(encoder_embed_dim == decoder_embed_dim,
             "config: encoder_embed_dim {} must equal decoder_embed_dim {} (cross-attention width)", encoder_embed_dim,
             decoder_embed_dim);
  for (auto [name, p] : {std::pair{"dropout", dropout}, std::pair{"attention_dropout", attention_dropout},
                         std::pair{"activation_dropout", activation_dropout}})
    ATTN_CHECK(p >= 0.0 && p < 1.0, "config: {} must be in [0, 1), got {}", name, p);
  ATTN_CHECK(padding_idx >= 0 && padding_idx < std::min(src_vocab_size, tgt_vocab_size) && eos_idx >= 0 &&
                 eos_idx < tgt_vocab_size,
             "config: padding_idx {} / eos_idx {} outside the vocabularies ({}, {})", padding_idx, eos_idx,
             src_vocab_size, tgt_vocab_size);
  ATTN_CHECK(ffn_init == "xavier" || ffn_init == "torch", "config: ffn_init must be 'xavier' or 'torch', got '{}'",
             ffn_init);
  if (share_all_embeddings)
    ATTN_CHECK(src_vocab_size == tgt_vocab_size,
               "config: share_all_embeddings needs a joined dictionary, but the vocabularies have {} and {} symbols",
               src_vocab_size, tgt_vocab_size);
}

std::vector<std::string> transformer_preset_names() {
  return {"transformer_wmt_en_de", "transformer_vaswani_wmt_en_de_big", "transformer_wmt_en_de_big",
          "transformer_wmt_en_de_big_t2t", "transformer_tiny"};
}

TransformerConfig transformer_preset(const std::string& name) {
  if (name == "transformer_wmt_en_de") return TransformerConfig{};
  if (name == "transformer_vaswani_wmt_en_de_big") return big_preset(name, 0.3, 0.0, 0.0, false);
  if (name == "transformer_wmt_en_de_big") return big_preset(name, 0.3, 0.1, 0.0, false);
  if (name == "transformer_wmt_en_de_big_t2t") return big_preset(name, 0.3, 0.1, 0.1, true);
  if (name == "transformer_tiny") return tiny_preset();
  throw Error(fmt::format("unknown Transformer preset '{}' (known: {})", name, fmt::join(transformer_preset_names(), ", ")));
}

void apply_override(TransformerConfig& config, const std::string& key_value) {
  const size_t eq = key_value.find('=');
  ATTN_CHECK(eq != std::string::npos && eq > 0, "config override '{}' is not of the form key=value", key_value);
  const std::string key = normalized_key(key_value.substr(0, eq));
  const std::string value = key_value.substr(eq + 1);
  const std::string mixer_prefix = std::string(kMixerOptionsKey) + ".";
  if (key.rfind(mixer_prefix, 0) == 0 && key.size() > mixer_prefix.size()) {
    config.mixer_options[key.substr(mixer_prefix.size())] = value;
    return;
  }
  const Field* field = find_field(key);
  ATTN_CHECK(field != nullptr, "config: unknown key '{}' (known: {})", key, fmt::join(field_names(), ", "));
  set_from_text(config, *field, value);
}

void apply_overrides(TransformerConfig& config, const std::vector<std::string>& key_values) {
  for (const std::string& kv : key_values) apply_override(config, kv);
}

nlohmann::json to_json(const TransformerConfig& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : fields()) std::visit([&](auto pointer) { j[f.name] = config.*pointer; }, f.pointer);
  j[kMixerOptionsKey] = config.mixer_options;
  return j;
}

TransformerConfig config_from_json(const nlohmann::json& j) {
  ATTN_CHECK(j.is_object(), "config: expected a JSON object, got {}", j.dump());
  TransformerConfig config;
  for (const auto& [key, value] : j.items()) {
    if (key == kMixerOptionsKey) {
      try {
        config.mixer_options = value.get<std::map<std::string, std::string>>();
      } catch (const nlohmann::json::exception&) {
        throw Error(fmt::format("config: '{}' must map names to strings, got {}", key, value.dump()));
      }
      continue;
    }
    const Field* field = find_field(key);
    ATTN_CHECK(field != nullptr, "config: unknown key '{}' in JSON", key);
    set_from_json(config, *field, value);
  }
  return config;
}

}  // namespace attn::nn
