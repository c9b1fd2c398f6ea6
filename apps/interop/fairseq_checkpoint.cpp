// A fairseq checkpoint as an attnlab model. See fairseq_checkpoint.hpp.
#include "apps/interop/fairseq_checkpoint.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "apps/interop/torch_file.hpp"
#include "data/dictionary.hpp"
#include "data/text_io.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {
namespace {

using data::DataError;
using data::PickleRef;
using data::PickleValue;
using Kind = PickleValue::Kind;

enum class Family { Transformer, LightConv };

// Where fairseq recorded the hyperparameters: "args" (a Namespace), or "cfg" with its "model"
// and "task" parts.
struct Recorded {
  const PickleValue* model = nullptr;
  const PickleValue* task = nullptr;
  // The value of `field` (model first, then task), or null when neither has it.
  PickleRef find(const std::string& field) const {
    PickleRef value = model ? model->find(field) : nullptr;
    if (!value && model) value = nested(field);
    return value || !task ? value : task->find(field);
  }
  // fairseq 0.12's dataclass configuration nests each side's fields: encoder_embed_dim is
  // "encoder": {"embed_dim": ...}.
  PickleRef nested(const std::string& field) const {
    for (const std::string side : {"encoder", "decoder"}) {
      if (!field.starts_with(side + "_")) continue;
      const PickleRef part = model->find(side);
      if (part && (part->is(Kind::Dict) || part->is(Kind::Object))) return part->find(field.substr(side.size() + 1));
    }
    return nullptr;
  }
};

Recorded recorded_hyperparameters(const PickleValue& root, const std::string& path) {
  if (PickleRef args = root.find("args"); args && !args->is(Kind::None)) return {args.get(), args.get()};
  const PickleRef cfg = root.find("cfg");
  const PickleRef model = cfg ? cfg->find("model") : nullptr;
  if (!model || model->is(Kind::None))
    throw DataError(
        fmt::format("{}: records no hyperparameters (neither \"args\" nor \"cfg\"[\"model\"]): not a "
                    "fairseq model checkpoint",
                    path));
  const PickleRef task = cfg->find("task");
  return {model.get(), task ? task.get() : nullptr};
}

// A recorded value as a "key=value" override's value; none for None and what is no plain value.
std::optional<std::string> override_text(const PickleValue& value) {
  switch (value.kind) {
    case Kind::Bool: return value.boolean ? "true" : "false";
    case Kind::Int: return std::to_string(value.integer);
    case Kind::Float: return fmt::format("{}", value.number);
    case Kind::String: return value.text;
    case Kind::List:
    case Kind::Tuple: {  // kernel size lists
      std::vector<std::string> items;
      for (const PickleRef& item : value.items) {
        if (!item->is(Kind::Int)) return std::nullopt;
        items.push_back(std::to_string(item->integer));
      }
      return fmt::format("[{}]", fmt::join(items, ","));
    }
    default: return std::nullopt;
  }
}

bool is_false_or_absent(const PickleRef& value) {
  return !value || value->is(Kind::None) || (value->is(Kind::Bool) && !value->boolean);
}

// Recorded hyperparameters whose models attnlab does not have: each must be off.
void refuse_unsupported(const Recorded& recorded, const nn::TransformerConfig& config, const std::string& path) {
  auto refuse = [&](const std::string& field, const std::string& value) {
    throw DataError(
        fmt::format("{}: {} = {}: attnlab has no such model (it imports fairseq's Transformer and "
                    "LightConv/DynamicConv models with ReLU FFNs and sinusoidal or learned positions)",
                    path, field, value));
  };
  if (PickleRef fn = recorded.find("activation_fn"); fn && fn->is(Kind::String) && fn->text != "relu")
    refuse("activation_fn", fn->text);
  if (PickleRef cutoff = recorded.find("adaptive_softmax_cutoff");
      cutoff && !cutoff->is(Kind::None) && !(cutoff->is(Kind::String) && cutoff->text.empty()))
    refuse("adaptive_softmax_cutoff", override_text(*cutoff).value_or("(set)"));
  for (const char* flag : {"adaptive_input", "layernorm_embedding", "cross_self_attention", "no_cross_attention",
                           "no_token_positional_embeddings", "char_inputs", "tie_adaptive_weights", "scale_attn",
                           "scale_fc", "scale_heads", "scale_resids"})
    if (!is_false_or_absent(recorded.find(flag))) refuse(flag, "true");
  for (const char* list : {"encoder_layers_to_keep", "decoder_layers_to_keep"})
    if (PickleRef kept = recorded.find(list); kept && !kept->is(Kind::None))
      refuse(list, override_text(*kept).value_or("(set)"));
  for (const char* dim : {"decoder_output_dim", "decoder_input_dim"})
    if (PickleRef value = recorded.find(dim);
        value && value->is(Kind::Int) && value->integer != config.decoder_embed_dim)
      refuse(dim, fmt::format("{} (the decoder's width is {})", value->integer, config.decoder_embed_dim));
}

// The model family of fairseq's --arch: its `transformer` or its `lightconv` model.
Family family_of(const std::string& arch, const std::string& path) {
  if (arch.starts_with("transformer")) return Family::Transformer;
  if (arch.starts_with("lightconv")) return Family::LightConv;
  throw DataError(
      fmt::format("{}: --arch {}: attnlab imports fairseq's Transformer (transformer*) and LightConv/DynamicConv "
                  "(lightconv*) models",
                  path, arch));
}

// attnlab's preset for fairseq's --arch: the one of the same name, else the family's base
// (fairseq's lightconv_wmt_en_fr_big and _zh_en_big: the big one; their fields are recorded).
std::string preset_of(const std::string& arch, Family family) {
  const std::vector<std::string> presets = nn::transformer_preset_names();
  if (std::find(presets.begin(), presets.end(), arch) != presets.end()) return arch;
  if (family == Family::Transformer) return "transformer_wmt_en_de";
  return arch.ends_with("_big") ? "lightconv_wmt_en_de_big" : "lightconv_wmt_en_de";
}

nn::TransformerConfig recorded_config(const Recorded& recorded, const std::string& arch, Family family,
                                      const std::string& path) {
  nn::TransformerConfig config = nn::transformer_preset(preset_of(arch, family));
  std::vector<std::string> overrides;
  if (family == Family::LightConv) {
    // fairseq's --encoder-conv-type and --decoder-conv-type default to dynamic; its causal
    // DynamicConv normalises over the last T taps of a shorter padded length (docs/models.md §3.1).
    overrides = {"encoder_conv_type=dynamic", "decoder_conv_type=dynamic", "fairseq_dynamic_softmax_span=true"};
  }
  for (const nn::ConfigFlag& flag : nn::config_flags())
    if (PickleRef value = recorded.find(flag.name))
      if (std::optional<std::string> text = override_text(*value)) overrides.push_back(flag.name + "=" + *text);
  // fairseq before 0.6 called the FFN's dropout relu_dropout.
  if (PickleRef relu = recorded.find("relu_dropout"); relu && !recorded.find("activation_dropout"))
    if (std::optional<std::string> text = override_text(*relu)) overrides.push_back("activation_dropout=" + *text);
  try {
    nn::apply_overrides(config, overrides);
  } catch (const std::exception& e) {
    throw DataError(fmt::format("{}: a recorded hyperparameter does not fit: {}", path, e.what()));
  }
  refuse_unsupported(recorded, config, path);
  return config;
}

// A Transformer layer's `layer_norms.N` under today's names (fairseq's upgrade): encoder 0, 1:
// self_attn_layer_norm, final_layer_norm; decoder 0, 1, 2: self_attn, encoder_attn, final.
std::string upgraded_layer_norm_name(const std::string& name) {
  const size_t at = name.find(".layer_norms.");
  if (at == std::string::npos) return name;
  const bool decoder = name.starts_with("decoder.");
  const char index = name[at + std::string(".layer_norms.").size()];
  const char* renamed = index == '0'   ? "self_attn_layer_norm"
                        : index == '1' ? (decoder ? "encoder_attn_layer_norm" : "final_layer_norm")
                                       : "final_layer_norm";
  return name.substr(0, at + 1) + renamed + name.substr(at + std::string(".layer_norms.0").size());
}

// Entries that hold no weights: `*.version` buffers, the sinusoidal positions'
// `_float_tensor`, and DynamicConv's `conv.conv_bias`, which fairseq's LightConv model
// allocates but never initialises or adds.
bool holds_no_weights(const std::string& name, Family family) {
  return name.ends_with(".version") || name.ends_with("._float_tensor") ||
         (family == Family::LightConv && name.ends_with(".conv.conv_bias"));
}

// The state dict's tensors under today's names, old ones upgraded (see the header).
std::map<std::string, Tensor> upgraded_weights(const TorchFile& file, const PickleValue& state, Family family,
                                               const std::string& path, std::vector<std::string>& left_out,
                                               std::map<std::string, double>& versions) {
  std::map<std::string, Tensor> weights;
  for (const auto& [key, value] : state.entries) {
    if (!key->is(Kind::String)) throw DataError(fmt::format("{}: a state dict key that is no string", path));
    std::string name = key->text;
    if (holds_no_weights(name, family)) {
      if (name.ends_with(".version") && TorchFile::is_tensor(*value)) {
        const Tensor version = file.tensor(*value, "model entry " + name);
        if (version.numel() != 1)
          throw DataError(
              fmt::format("{}: model entry {}: a version of {} numbers, not one", path, name, version.numel()));
        versions[name] = version.item();
      }
      left_out.push_back(name);
      continue;
    }
    Tensor tensor = file.tensor(*value, "model entry " + name);
    if (name.ends_with("in_proj_weight") || name.ends_with("in_proj_bias")) {  // q, k and v stacked
      const std::string prefix = name.substr(0, name.rfind("in_proj_"));
      const std::string part = name.ends_with("weight") ? "weight" : "bias";
      const int64_t rows = tensor.size(0) / 3;
      if (rows * 3 != tensor.size(0))
        throw DataError(fmt::format("{}: model entry {}: {} rows, not 3 equal parts", path, name, tensor.size(0)));
      for (const auto& [index, projection] : {std::pair{0, "q_proj"}, std::pair{1, "k_proj"}, std::pair{2, "v_proj"}})
        weights[prefix + projection + "." + part] = tensor.narrow(0, index * rows, rows).contiguous();
      continue;
    }
    name = family == Family::Transformer ? upgraded_layer_norm_name(name) : lightconv_layer_norm_name(name, false);
    // fairseq's CUDA LightConv layer keeps its taps as [H, K]; attnlab (as fairseq's PyTorch layer) as [H, 1, K].
    if (family == Family::LightConv && name.ends_with(".conv.weight") && tensor.dim() == 2)
      tensor = tensor.reshape({tensor.size(0), 1, tensor.size(1)});
    if (name == "decoder.embed_out") name = "decoder.output_projection.weight";
    weights[name] = std::move(tensor);
  }
  return weights;
}

}  // namespace

std::string lightconv_layer_norm_name(const std::string& name, bool to_today) {
  for (auto [today, published] :
       {std::pair{".layer_norm1.", ".layer_norms.0."}, std::pair{".layer_norm2.", ".layer_norms.1."}}) {
    const std::string from = to_today ? published : today, to = to_today ? today : published;
    if (const size_t at = name.find(from); at != std::string::npos)
      return name.substr(0, at) + to + name.substr(at + from.size());
  }
  return name;
}

FairseqModel read_fairseq_checkpoint(const std::string& path) {
  return read_fairseq_checkpoint(TorchFile::read(path), path);
}

FairseqModel read_fairseq_checkpoint(const TorchFile& file, const std::string& path) {
  const PickleValue& root = file.root();
  const PickleRef state = root.is(Kind::Dict) ? root.find("model") : nullptr;
  if (!state || !state->is(Kind::Dict))
    throw DataError(fmt::format("{}: holds no \"model\" state dict: not a fairseq model checkpoint", path));
  const Recorded recorded = recorded_hyperparameters(root, path);
  FairseqModel imported;
  for (const char* field : {"arch", "_name"})
    if (PickleRef arch = recorded.find(field); arch && arch->is(Kind::String) && imported.arch.empty())
      imported.arch = arch->text;
  if (imported.arch.empty()) throw DataError(fmt::format("{}: records no --arch", path));
  for (auto [field, target] :
       {std::pair{"source_lang", &imported.source_lang}, std::pair{"target_lang", &imported.target_lang}})
    if (PickleRef lang = recorded.find(field); lang && lang->is(Kind::String)) *target = lang->text;
  const Family family = family_of(imported.arch, path);
  imported.config = recorded_config(recorded, imported.arch, family, path);

  std::map<std::string, double> versions;
  imported.weights = upgraded_weights(file, *state, family, path, imported.left_out, versions);
  // Transformer decoders saved before fairseq's version 3 had no LayerNorm after the stack
  // (LightConv's decoder is version 2 and has one when pre-norm).
  if (const auto version = versions.find("decoder.version");
      family == Family::Transformer && version != versions.end() && version->second <= 2)
    imported.config.no_decoder_final_norm = true;
  if (const auto version = versions.find("encoder.version");
      version != versions.end() && version->second < 2 && imported.config.encoder_normalize_before)
    throw DataError(
        fmt::format("{}: a pre-norm encoder of fairseq before version 2 (no final LayerNorm), which attnlab "
                    "does not build",
                    path));
  auto rows_of = [&](const std::string& name) {
    const auto found = imported.weights.find(name);
    if (found == imported.weights.end() || found->second.dim() != 2)
      throw DataError(fmt::format("{}: the state dict has no matrix {}", path, name));
    return found->second.size(0);
  };
  imported.config.src_vocab_size = rows_of("encoder.embed_tokens.weight");
  imported.config.tgt_vocab_size = rows_of("decoder.embed_tokens.weight");
  imported.config.padding_idx = data::Dictionary::kPad;
  imported.config.eos_idx = data::Dictionary::kEos;
  imported.config.unk_idx = data::Dictionary::kUnk;
  // Tied output matrices are the embedding they are tied to.
  if (!imported.weights.contains("decoder.output_projection.weight") &&
      (imported.config.share_all_embeddings || imported.config.share_decoder_input_output_embed))
    imported.weights["decoder.output_projection.weight"] = imported.weights.at("decoder.embed_tokens.weight");
  try {
    imported.config.validate();
  } catch (const std::exception& e) {
    throw DataError(fmt::format("{}: the recorded hyperparameters make no model: {}", path, e.what()));
  }
  return imported;
}

}  // namespace attn::app
