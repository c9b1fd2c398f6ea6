#include "nn/transformer/transformer_config.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>
#include <variant>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "nn/mixers/kernel_attention.hpp"

namespace attn::nn {
namespace {

using FieldPointer = std::variant<int64_t TransformerConfig::*, double TransformerConfig::*,
                                  bool TransformerConfig::*, std::string TransformerConfig::*,
                                  std::vector<int64_t> TransformerConfig::*>;
// Where a field lives in the JSON, and how the command line sets it.
enum class Group { Model, MixerOption };
enum class FlagStyle { None, Value, Switch };
struct Field {
  const char* name;
  FieldPointer pointer;
  Group group;
  FlagStyle flag;
  const char* help;
};

// Every field, in fairseq spelling: the single table behind the JSON, the overrides and the
// command-line flags.
const std::vector<Field>& fields() {
  using C = TransformerConfig;
  using enum Group;
  using enum FlagStyle;
  static const std::vector<Field> table = {
      {"arch", &C::arch, Model, None, ""},
      {"src_vocab_size", &C::src_vocab_size, Model, None, ""},
      {"tgt_vocab_size", &C::tgt_vocab_size, Model, None, ""},
      {"padding_idx", &C::padding_idx, Model, None, ""},
      {"eos_idx", &C::eos_idx, Model, None, ""},
      {"unk_idx", &C::unk_idx, Model, None, ""},
      {"encoder_embed_dim", &C::encoder_embed_dim, Model, Value, "Encoder width D"},
      {"encoder_ffn_embed_dim", &C::encoder_ffn_embed_dim, Model, Value, "Encoder FFN width"},
      {"encoder_layers", &C::encoder_layers, Model, Value, "Encoder layers"},
      {"encoder_attention_heads", &C::encoder_attention_heads, Model, Value, "Encoder heads (attention and conv)"},
      {"encoder_normalize_before", &C::encoder_normalize_before, Model, Switch, "Pre-norm encoder"},
      {"encoder_learned_pos", &C::encoder_learned_pos, Model, Switch, "Learned encoder positions"},
      {"decoder_embed_dim", &C::decoder_embed_dim, Model, Value, "Decoder width D"},
      {"decoder_ffn_embed_dim", &C::decoder_ffn_embed_dim, Model, Value, "Decoder FFN width"},
      {"decoder_layers", &C::decoder_layers, Model, Value, "Decoder layers"},
      {"decoder_attention_heads", &C::decoder_attention_heads, Model, Value, "Decoder heads (attention and conv)"},
      {"decoder_normalize_before", &C::decoder_normalize_before, Model, Switch, "Pre-norm decoder"},
      {"decoder_learned_pos", &C::decoder_learned_pos, Model, Switch, "Learned decoder positions"},
      {"no_decoder_final_norm", &C::no_decoder_final_norm, Model, Switch, "Pre-norm: no final decoder LayerNorm"},
      {"dropout", &C::dropout, Model, Value, "Dropout"},
      {"attention_dropout", &C::attention_dropout, Model, Value, "Dropout on attention weights"},
      {"activation_dropout", &C::activation_dropout, Model, Value, "Dropout after the FFN's ReLU"},
      {"source_word_dropout", &C::source_word_dropout, Model, Value,
       "Word dropout: zero a source token's whole embedding with this probability in training"},
      {"target_word_dropout", &C::target_word_dropout, Model, Value,
       "Word dropout on the previous target tokens the decoder reads in training"},
      {"share_all_embeddings", &C::share_all_embeddings, Model, Switch, "One embedding for encoder, decoder, output"},
      {"share_decoder_input_output_embed", &C::share_decoder_input_output_embed, Model, Switch,
       "Decoder embedding = output matrix"},
      {"no_scale_embedding", &C::no_scale_embedding, Model, Switch, "No sqrt(D) embedding scale"},
      {"scale_norm", &C::scale_norm, Model, Switch, "ScaleNorm g*x/|x| (one scalar g) in place of every LayerNorm"},
      {"fix_norm", &C::fix_norm, Model, Switch, "FixNorm: embeddings and output matrix rows normalised to unit length"},
      {"lexical_model", &C::lexical_model, Model, Switch,
       "Lexical model (Nguyen & Chiang 2018): the output projection also reads the source embeddings the last "
       "cross-attention attends to"},
      {"max_source_positions", &C::max_source_positions, Model, Value, "Longest source (Linformer: E's columns)"},
      {"max_target_positions", &C::max_target_positions, Model, Value, "Longest target"},
      {"ffn_init", &C::ffn_init, Model, Value, "FFN init: xavier | torch"},
      {"ffn_glu", &C::ffn_glu, Model, Switch,
       "Gated FFN (GEGLU): fc1 gives 2F, value * GELU(gate); F = 2/3 of a ReLU FFN's width matches its cost"},
      {"encoder_self_mixer", &C::encoder_self_mixer, Model, Value,
       "softmax | linformer | conv | kernel:MAP+additive, or one per layer: conv,conv,softmax"},
      {"decoder_self_mixer", &C::decoder_self_mixer, Model, Value,
       "softmax | conv | kernel:MAP+RULE (MAP: elu t2r rfa performer dpfp identity; RULE: additive gated decay delta), or one per layer"},
      {"cross_mixer", &C::cross_mixer, Model, Value, "softmax | linformer | kernel:MAP+additive, or one per layer"},
      {"encoder_conv_type", &C::encoder_conv_type, MixerOption, Value, "Encoder conv: lightweight | dynamic"},
      {"decoder_conv_type", &C::decoder_conv_type, MixerOption, Value, "Decoder conv: lightweight | dynamic"},
      {"encoder_kernel_size_list", &C::encoder_kernel_size_list, MixerOption, Value,
       "Encoder conv widths, one per layer or one for all: [3,7,15,31,31,31,31]"},
      {"decoder_kernel_size_list", &C::decoder_kernel_size_list, MixerOption, Value,
       "Decoder conv widths, one per layer or one for all"},
      {"encoder_conv_dim", &C::encoder_conv_dim, MixerOption, Value, "Encoder conv channels C (0: embed dim)"},
      {"decoder_conv_dim", &C::decoder_conv_dim, MixerOption, Value, "Decoder conv channels C (0: embed dim)"},
      {"encoder_glu", &C::encoder_glu, MixerOption, Value, "GLU before the encoder conv (true/false)"},
      {"decoder_glu", &C::decoder_glu, MixerOption, Value, "GLU before the decoder conv (true/false)"},
      {"weight_softmax", &C::weight_softmax, MixerOption, Value, "Softmax over the conv taps (true/false)"},
      {"weight_dropout", &C::weight_dropout, MixerOption, Value, "DropConnect on the normalised conv taps"},
      {"input_dropout", &C::input_dropout, MixerOption, Value, "Dropout on the conv block input"},
      {"fairseq_dynamic_softmax_span", &C::fairseq_dynamic_softmax_span, MixerOption, Switch,
       "DynamicConv: fairseq's softmax over the padded length's last T taps"},
      {"compressed", &C::compressed, MixerOption, Value, "Linformer compression ratio: k = max positions / ratio"},
      {"linformer_k", &C::linformer_k, MixerOption, Value, "Linformer projected length k (overrides --compressed)"},
      {"shared_kv_compressed", &C::shared_kv_compressed, MixerOption, Value, "Linformer: E = F (true/false)"},
      {"shared_layer_kv_compressed", &C::shared_layer_kv_compressed, MixerOption, Value,
       "Linformer: one E for K and V in every layer (true/false)"},
      {"freeze_compress", &C::freeze_compress, MixerOption, Value, "Linformer: E and F not trained (true/false)"},
      {"linformer_xavier_init", &C::linformer_xavier_init, MixerOption, Value,
       "Linformer: Xavier init of E and F (default: PyTorch's Linear init)"},
      {"causal_proj_dim", &C::causal_proj_dim, MixerOption, Value,
       "Kernel attention in decoder self-attention: T2R/Performer feature size, RFA random features"},
      {"cross_proj_dim", &C::cross_proj_dim, MixerOption, Value,
       "Kernel attention elsewhere (cross, encoder self): T2R/Performer feature size, RFA random features"},
      {"dpfp_rolls", &C::dpfp_rolls, MixerOption, Value, "DPFP feature map: rolls nu (features 2*d*nu)"},
      {"redraw_random_features", &C::redraw_random_features, MixerOption, Value,
       "RFA, Performer: fresh random features at every training forward (true/false; evaluation uses the saved draw)"},
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
  return names;
}


// The readers of a field's text throw attn::Error saying only what is wrong with it ("must be
// an integer, got '1.5'"): the caller names the field (an override) or the flag (train's
// command line, config_value_problem).
bool parse_bool(const std::string& text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  throw Error(fmt::format("must be true/false, got '{}'", text));
}

// `text` read whole by `parse` (std::stoll, std::stod), or nothing: "1.5" is no int64.
template <typename Number, typename Parse>
std::optional<Number> read_number(const std::string& text, Parse parse) {
  size_t used = 0;
  try {
    const Number value = parse(text, &used);
    if (used == text.size() && !text.empty()) return value;
  } catch (const std::exception&) {  // no number at its start, or one out of range
  }
  return std::nullopt;
}

std::optional<int64_t> read_integer(const std::string& text) {
  return read_number<int64_t>(text, [](const std::string& s, size_t* n) { return std::stoll(s, n); });
}

int64_t parse_integer(const std::string& text) {
  const std::optional<int64_t> value = read_integer(text);
  ATTN_CHECK(value.has_value(), "must be an integer, got '{}'", text);
  return *value;
}

double parse_real(const std::string& text) {
  const auto value = read_number<double>(text, [](const std::string& s, size_t* n) { return std::stod(s, n); });
  ATTN_CHECK(value.has_value(), "must be a number, got '{}'", text);
  return *value;
}

// "[3,7,15]", "3,7,15" or "3 7 15".
std::vector<int64_t> parse_int_list(const std::string& text) {
  std::string words = text;
  for (char& ch : words)
    if (ch == '[' || ch == ']' || ch == ',' || ch == '(' || ch == ')') ch = ' ';
  std::istringstream in(words);
  std::vector<int64_t> values;
  for (std::string word; in >> word;) {
    const std::optional<int64_t> value = read_integer(word);
    ATTN_CHECK(value.has_value(), "must be a list of integers such as [3,7,15], got '{}'", text);
    values.push_back(*value);
  }
  ATTN_CHECK(!values.empty(), "must be a list of integers such as [3,7,15], got '{}'", text);
  return values;
}

void set_value(TransformerConfig& c, const Field& f, const std::string& text) {
  std::visit(
      [&](auto pointer) {
        using T = std::decay_t<decltype(c.*pointer)>;
        if constexpr (std::is_same_v<T, bool>) c.*pointer = parse_bool(text);
        else if constexpr (std::is_same_v<T, int64_t>) c.*pointer = parse_integer(text);
        else if constexpr (std::is_same_v<T, double>) c.*pointer = parse_real(text);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) c.*pointer = parse_int_list(text);
        else c.*pointer = text;
      },
      f.pointer);
}

void set_from_text(TransformerConfig& c, const Field& f, const std::string& text) {
  try {
    set_value(c, f, text);
  } catch (const Error& e) {
    throw Error(fmt::format("config: '{}' {}", f.name, e.what()));
  }
}

// A JSON integer that fits int64: nlohmann's get<int64_t>() would take 16.5 as 16, 1e30 as
// INT64_MIN and true as 1.
bool is_int64(const nlohmann::json& value) {
  return value.is_number_integer() &&
         (!value.is_number_unsigned() || value.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()));
}

void set_from_json(TransformerConfig& c, const Field& f, const nlohmann::json& value) {
  std::visit(
      [&](auto pointer) {
        using T = std::decay_t<decltype(c.*pointer)>;
        if constexpr (std::is_same_v<T, int64_t>)
          ATTN_CHECK(is_int64(value), "config: field '{}' must be an integer, got {}", f.name, value.dump());
        if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          ATTN_CHECK(value.is_array() && std::all_of(value.begin(), value.end(), is_int64),
                     "config: field '{}' must be a list of integers, got {}", f.name, value.dump());
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

std::vector<std::string> split_kinds(const std::string& mixers) {
  std::vector<std::string> kinds;
  std::istringstream in(mixers);
  for (std::string kind; std::getline(in, kind, ',');) kinds.push_back(kind);
  return kinds;
}

// The kinds a place's mixer takes besides kernel:<map>+<rule>; none for a field that is no mixer.
std::optional<std::vector<std::string>> mixer_kinds_of(const std::string& field) {
  if (field == "encoder_self_mixer") return std::vector<std::string>{"softmax", "linformer", "conv"};
  if (field == "decoder_self_mixer") return std::vector<std::string>{"softmax", "conv"};
  if (field == "cross_mixer") return std::vector<std::string>{"softmax", "linformer"};
  return std::nullopt;
}

// Refuses a kind of a place's mixer list (one kind, or one per layer) that the place cannot
// take, saying only what is wrong, as the readers above: the caller names the field or flag.
void check_mixer_kinds(const std::string& field, const std::string& mixers) {
  const std::vector<std::string> allowed = mixer_kinds_of(field).value();
  const bool decoder_self = field == "decoder_self_mixer", cross = field == "cross_mixer";
  for (const std::string& kind : split_kinds(mixers)) {
    ATTN_CHECK(kind != "linformer" || !decoder_self,
               "linformer cannot be causal: its compression mixes every position (use it for encoder_self_mixer or "
               "cross_mixer)");
    if (kind.starts_with("kernel:")) {
      check_kernel_mixer_kind(kind, decoder_self, cross);
      continue;
    }
    ATTN_CHECK(std::find(allowed.begin(), allowed.end(), kind) != allowed.end(),
               "unknown or unsupported mixer '{}' (this place takes: {}, kernel:<map>+<rule>)", kind,
               fmt::join(allowed, ", "));
  }
}

// A place's mixer list: its kinds, and as many as there are layers when more than one.
void validate_mixers(const std::string& field, const std::string& mixers, int64_t layers) {
  const size_t count = split_kinds(mixers).size();
  ATTN_CHECK(count == 1 || int64_t(count) == layers,
             "config: {} lists {} mixers but there are {} layers (give one kind, or one per layer)", field, count,
             layers);
  try {
    check_mixer_kinds(field, mixers);
  } catch (const Error& e) {
    throw Error(fmt::format("config: {}: {}", field, e.what()));
  }
}

bool uses_kind(const std::string& mixers, const std::string& kind) {
  const std::vector<std::string> kinds = split_kinds(mixers);
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

// The conv options of one stack, when one of its layers is a conv block.
void validate_conv(const char* side, const std::string& type, const std::vector<int64_t>& kernels, int64_t layers,
                   int64_t conv_dim, int64_t heads, bool centred) {
  ATTN_CHECK(type == "lightweight" || type == "dynamic", "config: {}_conv_type must be lightweight or dynamic, got '{}'",
             side, type);
  ATTN_CHECK(kernels.size() == 1 || int64_t(kernels.size()) == layers,
             "config: {}_kernel_size_list has {} entries but there are {} {} layers (give one, or one per layer)", side,
             kernels.size(), layers, side);
  for (int64_t k : kernels) {
    ATTN_CHECK(k > 0, "config: {}_kernel_size_list holds {}; kernel sizes must be positive", side, k);
    ATTN_CHECK(!centred || k % 2 == 1,
               "config: {}_kernel_size_list holds {}; the encoder's centred convolution needs odd kernel sizes", side, k);
  }
  ATTN_CHECK(conv_dim >= 0 && conv_dim % heads == 0,
             "config: {}_conv_dim {} must be 0 (the embed dim) or a positive multiple of {}_attention_heads {}", side,
             conv_dim, side, heads);
}

// Upper bounds of the sizes, far above any model this toolkit trains: building a model loops
// and allocates by them, so a mistyped 2147483648 layers must be an error, not hours of
// building layers or a machine out of memory.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxSize = int64_t(1) << 24;  // widths, heads, positions, vocabularies, kernel sizes
constexpr double kMaxValues = double(int64_t(1) << 32);  // all weights and position tables: 16 GiB of float32

// Every size field (the layer counts aside) at most kMaxSize.
void check_size_bounds(const TransformerConfig& c) {
  for (auto [name, v] : {std::pair{"src_vocab_size", c.src_vocab_size}, std::pair{"tgt_vocab_size", c.tgt_vocab_size},
                         std::pair{"encoder_embed_dim", c.encoder_embed_dim},
                         std::pair{"decoder_embed_dim", c.decoder_embed_dim},
                         std::pair{"encoder_ffn_embed_dim", c.encoder_ffn_embed_dim},
                         std::pair{"decoder_ffn_embed_dim", c.decoder_ffn_embed_dim},
                         std::pair{"encoder_attention_heads", c.encoder_attention_heads},
                         std::pair{"decoder_attention_heads", c.decoder_attention_heads},
                         std::pair{"max_source_positions", c.max_source_positions},
                         std::pair{"max_target_positions", c.max_target_positions},
                         std::pair{"encoder_conv_dim", c.encoder_conv_dim},
                         std::pair{"decoder_conv_dim", c.decoder_conv_dim},
                         std::pair{"compressed", c.compressed}, std::pair{"linformer_k", c.linformer_k},
                         std::pair{"causal_proj_dim", c.causal_proj_dim}, std::pair{"cross_proj_dim", c.cross_proj_dim},
                         std::pair{"dpfp_rolls", c.dpfp_rolls}})
    ATTN_CHECK(v <= kMaxSize, "config: {} must be at most {}, got {}", name, kMaxSize, v);
  for (auto [name, kernels] : {std::pair{"encoder_kernel_size_list", &c.encoder_kernel_size_list},
                               std::pair{"decoder_kernel_size_list", &c.decoder_kernel_size_list}})
    for (int64_t k : *kernels)
      ATTN_CHECK(k <= kMaxSize, "config: {} holds {}; kernel sizes must be at most {}", name, k, kMaxSize);
}

int64_t largest(const std::vector<int64_t>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

// About how many numbers building the model allocates: embeddings, position tables, each
// layer's projections and FFN, and what the variants add per layer (convolution weights,
// Linformer's E and F, kernel feature maps). In double: the bounded sizes may still multiply
// past int64.
double approximate_size(const TransformerConfig& c) {
  const double d = double(c.encoder_embed_dim);
  const double vocab = double(c.src_vocab_size) + (c.share_all_embeddings ? 0.0 : 2.0 * double(c.tgt_vocab_size));
  const double positions = double(c.max_source_positions + c.max_target_positions);
  double per_layer = 8 * d * d + 2 * d * double(std::max(c.encoder_ffn_embed_dim, c.decoder_ffn_embed_dim)) +
                     d * double(std::max(c.causal_proj_dim, c.cross_proj_dim));
  if (uses_kind(c.encoder_self_mixer, "conv") || uses_kind(c.decoder_self_mixer, "conv"))
    per_layer += d * double(std::max(c.encoder_attention_heads, c.decoder_attention_heads)) *
                 double(std::max(largest(c.encoder_kernel_size_list), largest(c.decoder_kernel_size_list)));
  if (uses_kind(c.encoder_self_mixer, "linformer") || uses_kind(c.cross_mixer, "linformer"))
    per_layer += 2 * double(linformer_projected_length(c)) * double(c.max_source_positions);
  return (vocab + positions) * d + double(c.encoder_layers + c.decoder_layers) * per_layer;
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
  for (auto [name, layers] : {std::pair{"encoder_layers", encoder_layers}, std::pair{"decoder_layers", decoder_layers}})
    ATTN_CHECK(layers <= kMaxLayers, "config: {} must be at most {}, got {}", name, kMaxLayers, layers);
  check_size_bounds(*this);
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
                         std::pair{"activation_dropout", activation_dropout},
                         std::pair{"source_word_dropout", source_word_dropout},
                         std::pair{"target_word_dropout", target_word_dropout}})
    ATTN_CHECK(p >= 0.0 && p < 1.0, "config: {} must be in [0, 1), got {}", name, p);
  ATTN_CHECK(padding_idx >= 0 && padding_idx < std::min(src_vocab_size, tgt_vocab_size) && eos_idx >= 0 &&
                 eos_idx < tgt_vocab_size && unk_idx >= 0 && unk_idx < tgt_vocab_size,
             "config: padding_idx {} / eos_idx {} / unk_idx {} outside the vocabularies ({}, {})", padding_idx, eos_idx,
             unk_idx, src_vocab_size, tgt_vocab_size);
  ATTN_CHECK(ffn_init == "xavier" || ffn_init == "torch", "config: ffn_init must be 'xavier' or 'torch', got '{}'",
             ffn_init);
  validate_mixers("encoder_self_mixer", encoder_self_mixer, encoder_layers);
  validate_mixers("decoder_self_mixer", decoder_self_mixer, decoder_layers);
  validate_mixers("cross_mixer", cross_mixer, decoder_layers);
  if (uses_kind(encoder_self_mixer, "conv"))
    validate_conv("encoder", encoder_conv_type, encoder_kernel_size_list, encoder_layers, encoder_conv_dim,
                  encoder_attention_heads, true);
  if (uses_kind(decoder_self_mixer, "conv"))
    validate_conv("decoder", decoder_conv_type, decoder_kernel_size_list, decoder_layers, decoder_conv_dim,
                  decoder_attention_heads, false);
  for (auto [name, p] : {std::pair{"weight_dropout", weight_dropout}, std::pair{"input_dropout", input_dropout}})
    ATTN_CHECK(p >= 0.0 && p < 1.0, "config: {} must be in [0, 1), got {}", name, p);
  if (uses_kind(encoder_self_mixer, "linformer") || uses_kind(cross_mixer, "linformer")) {
    ATTN_CHECK(compressed >= 1, "config: compressed (the Linformer ratio) must be >= 1, got {}", compressed);
    const int64_t k = linformer_projected_length(*this);
    ATTN_CHECK(k >= 1 && k <= max_source_positions,
               "config: the Linformer projected length k = {} must be in [1, max_source_positions = {}] (set "
               "--linformer-k or --compressed)",
               k, max_source_positions);
  }
  for (auto [name, v] : {std::pair{"causal_proj_dim", causal_proj_dim}, std::pair{"cross_proj_dim", cross_proj_dim},
                         std::pair{"dpfp_rolls", dpfp_rolls}})
    ATTN_CHECK(v > 0, "config: {} must be positive, got {}", name, v);
  if (lexical_model) {
    const std::string last_cross = mixer_kind_of_layer(cross_mixer, decoder_layers - 1);
    ATTN_CHECK(last_cross == "softmax",
               "config: lexical_model reads the last decoder layer's cross-attention weights, which needs a softmax "
               "cross_mixer there (got '{}')",
               last_cross);
  }
  if (share_all_embeddings)
    ATTN_CHECK(tgt_vocab_size <= src_vocab_size,
               "config: share_all_embeddings needs a joined dictionary (or a target dictionary that is its first "
               "entries), but the target vocabulary has {} symbols and the source's {}",
               tgt_vocab_size, src_vocab_size);
  const double size = approximate_size(*this);
  ATTN_CHECK(size <= kMaxValues,
             "config: the model would hold about {:.3g} numbers (weights and position tables), more than the {:.3g} "
             "this toolkit builds; reduce the layers, widths, vocabularies or positions",
             size, kMaxValues);
}

int64_t linformer_projected_length(const TransformerConfig& c) {
  return c.linformer_k > 0 ? c.linformer_k : c.max_source_positions / std::max<int64_t>(c.compressed, 1);
}

std::string mixer_kind_of_layer(const std::string& mixers, int64_t layer) {
  const std::vector<std::string> kinds = split_kinds(mixers);
  if (kinds.size() <= 1) return mixers;
  ATTN_CHECK(layer >= 0 && layer < int64_t(kinds.size()), "config: mixer list '{}' has no entry for layer {}", mixers,
             layer);
  return kinds[size_t(layer)];
}

const std::vector<ConfigFlag>& config_flags() {
  static const std::vector<ConfigFlag> flags = [] {
    std::vector<ConfigFlag> out;
    for (const Field& f : fields())
      if (f.flag != FlagStyle::None) out.push_back({f.name, f.flag == FlagStyle::Switch, f.help});
    return out;
  }();
  return flags;
}

void apply_override(TransformerConfig& config, const std::string& key_value) {
  const size_t eq = key_value.find('=');
  ATTN_CHECK(eq != std::string::npos && eq > 0, "config override '{}' is not of the form key=value", key_value);
  const std::string key = normalized_key(key_value.substr(0, eq));
  const std::string value = key_value.substr(eq + 1);
  const Field* field = find_field(key);
  ATTN_CHECK(field != nullptr, "config: unknown key '{}' (known: {})", key, fmt::join(field_names(), ", "));
  set_from_text(config, *field, value);
}

void apply_overrides(TransformerConfig& config, const std::vector<std::string>& key_values) {
  for (const std::string& kv : key_values) apply_override(config, kv);
}

std::string config_value_problem(const std::string& key, const std::string& text) {
  const Field* field = find_field(normalized_key(key));
  ATTN_CHECK(field != nullptr, "config: unknown key '{}' (known: {})", key, fmt::join(field_names(), ", "));
  try {
    TransformerConfig scratch;
    set_value(scratch, *field, text);
    if (mixer_kinds_of(field->name)) check_mixer_kinds(field->name, text);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

nlohmann::json to_json(const TransformerConfig& config) {
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json mixer_options = nlohmann::json::object();
  for (const Field& f : fields()) {
    nlohmann::json& into = f.group == Group::MixerOption ? mixer_options : j;
    std::visit([&](auto pointer) { into[f.name] = config.*pointer; }, f.pointer);
  }
  j[kMixerOptionsKey] = mixer_options;
  return j;
}

std::vector<std::string> config_differences(const TransformerConfig& a, const TransformerConfig& b) {
  const nlohmann::json ja = to_json(a), jb = to_json(b);
  std::vector<std::string> out;
  for (const Field& f : fields()) {
    const nlohmann::json& va = f.group == Group::MixerOption ? ja.at(kMixerOptionsKey).at(f.name) : ja.at(f.name);
    const nlohmann::json& vb = f.group == Group::MixerOption ? jb.at(kMixerOptionsKey).at(f.name) : jb.at(f.name);
    if (va != vb) out.push_back(fmt::format("{}: {} vs {}", f.name, va.dump(), vb.dump()));
  }
  return out;
}

namespace {

// The fields every checkpoint has recorded since the format began: a default in place of a
// missing one would build another model than the one saved. A field added later keeps its
// default when missing, which is what the versions before it built.
constexpr const char* kFieldsAlwaysRecorded[] = {
    "arch", "src_vocab_size", "tgt_vocab_size", "padding_idx", "eos_idx", "encoder_embed_dim",
    "encoder_ffn_embed_dim", "encoder_layers", "encoder_attention_heads", "encoder_normalize_before",
    "encoder_learned_pos", "decoder_embed_dim", "decoder_ffn_embed_dim", "decoder_layers", "decoder_attention_heads",
    "decoder_normalize_before", "decoder_learned_pos", "no_decoder_final_norm", "share_all_embeddings",
    "share_decoder_input_output_embed", "no_scale_embedding", "max_source_positions", "max_target_positions"};

}  // namespace

TransformerConfig config_from_json(const nlohmann::json& j) {
  ATTN_CHECK(j.is_object(), "config: expected a JSON object, got {}", j.dump());
  TransformerConfig config;
  auto read_group = [&config](const nlohmann::json& object, Group group, const std::string& where) {
    for (const auto& [key, value] : object.items()) {
      if (group == Group::Model && key == kMixerOptionsKey) continue;
      const Field* field = find_field(key);
      ATTN_CHECK(field != nullptr && field->group == group, "config: unknown key '{}' in {}", key, where);
      set_from_json(config, *field, value);
    }
  };
  read_group(j, Group::Model, "the JSON");
  if (j.contains(kMixerOptionsKey)) {
    const nlohmann::json& options = j.at(kMixerOptionsKey);
    ATTN_CHECK(options.is_object(), "config: '{}' must be a JSON object, got {}", kMixerOptionsKey, options.dump());
    read_group(options, Group::MixerOption, kMixerOptionsKey);
  }
  for (const char* name : kFieldsAlwaysRecorded)
    ATTN_CHECK(j.contains(name), "config: the JSON has no field '{}'", name);
  return config;
}

}  // namespace attn::nn
