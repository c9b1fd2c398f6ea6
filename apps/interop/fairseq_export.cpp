// An attnlab model as a fairseq checkpoint. See fairseq_export.hpp.
#include "apps/interop/fairseq_export.hpp"

#include <fmt/core.h>

#include "apps/interop/fairseq_checkpoint.hpp"
#include "core/error.hpp"
#include "data/python_pickle_writer.hpp"

namespace attn::app {
namespace {

using data::PickleRef;
using Attributes = std::vector<std::pair<PickleRef, PickleRef>>;

enum class Family { Transformer, LightConv };

// The one kind of a place's mixer in every layer; refuses a list that changes kind.
std::string uniform_mixer(const std::string& mixers, int64_t layers, const char* place) {
  const std::string first = nn::mixer_kind_of_layer(mixers, 0);
  for (int64_t layer = 1; layer < layers; ++layer)
    ATTN_CHECK(nn::mixer_kind_of_layer(mixers, layer) == first,
               "export-fairseq: {} = {}: fairseq's models have one mixer per stack", place, mixers);
  return first;
}

Family family_of(const nn::TransformerConfig& c) {
  const std::string encoder = uniform_mixer(c.encoder_self_mixer, c.encoder_layers, "encoder_self_mixer");
  const std::string decoder = uniform_mixer(c.decoder_self_mixer, c.decoder_layers, "decoder_self_mixer");
  const std::string cross = uniform_mixer(c.cross_mixer, c.decoder_layers, "cross_mixer");
  if (encoder == "softmax" && decoder == "softmax" && cross == "softmax") return Family::Transformer;
  if (encoder == "conv" && decoder == "conv" && cross == "softmax") return Family::LightConv;
  throw Error(fmt::format(
      "export-fairseq: mixers {} / {} / {} (encoder self / decoder self / cross): fairseq's transformer has softmax "
      "in all three, its lightconv conv, conv, softmax",
      encoder, decoder, cross));
}

void refuse_what_fairseq_lacks(const nn::TransformerConfig& c, Family family) {
  for (const auto& [on, field] : {std::pair{c.scale_norm, "scale_norm"}, std::pair{c.fix_norm, "fix_norm"},
                                  std::pair{c.lexical_model, "lexical_model"}, std::pair{c.ffn_glu, "ffn_glu"}})
    ATTN_CHECK(!on, "export-fairseq: {} = true: fairseq's translation models have no such part", field);
  if (family != Family::LightConv) return;
  ATTN_CHECK(!c.no_scale_embedding, "export-fairseq: no_scale_embedding = true: fairseq's lightconv always scales");
  ATTN_CHECK(!(c.decoder_normalize_before && c.no_decoder_final_norm),
             "export-fairseq: no_decoder_final_norm = true: fairseq's pre-norm lightconv decoder has a final LayerNorm");
}

class Namespace {
 public:
  void set(const std::string& name, PickleRef value) { attributes_.emplace_back(data::pickle_string(name), value); }
  void set(const std::string& name, int64_t value) { set(name, data::pickle_int(value)); }
  void set(const std::string& name, double value) { set(name, data::pickle_float(value)); }
  void set(const std::string& name, bool value) { set(name, data::pickle_bool(value)); }
  void set(const std::string& name, const std::string& value) { set(name, data::pickle_string(value)); }
  void set(const std::string& name, const char* value) { set(name, data::pickle_string(value)); }
  PickleRef object() const {
    return data::pickle_object("argparse", "Namespace", {}, data::pickle_dict(attributes_));
  }

 private:
  Attributes attributes_;
};

// A kernel width list with one entry per layer, as fairseq's model takes it.
PickleRef kernel_list(const std::vector<int64_t>& widths, int64_t layers) {
  std::vector<PickleRef> items;
  for (int64_t layer = 0; layer < layers; ++layer)
    items.push_back(data::pickle_int(widths.size() == 1 ? widths.front() : widths.at(size_t(layer))));
  return data::pickle_list(std::move(items));
}

PickleRef fairseq_args(const FairseqExportSource& s, Family family) {
  const nn::TransformerConfig& c = s.config;
  Namespace args;
  args.set("arch", family == Family::Transformer ? "transformer" : "lightconv");
  args.set("task", "translation");
  args.set("data", s.data_dir);
  args.set("source_lang", s.source_lang);
  args.set("target_lang", s.target_lang);
  for (const auto& [side, dim, ffn, layers, heads, pre_norm, learned] :
       {std::tuple{"encoder", c.encoder_embed_dim, c.encoder_ffn_embed_dim, c.encoder_layers, c.encoder_attention_heads,
                   c.encoder_normalize_before, c.encoder_learned_pos},
        std::tuple{"decoder", c.decoder_embed_dim, c.decoder_ffn_embed_dim, c.decoder_layers, c.decoder_attention_heads,
                   c.decoder_normalize_before, c.decoder_learned_pos}}) {
    const std::string prefix = std::string(side) + "_";
    args.set(prefix + "embed_dim", dim);
    args.set(prefix + "ffn_embed_dim", ffn);
    args.set(prefix + "layers", layers);
    args.set(prefix + "attention_heads", heads);
    args.set(prefix + "normalize_before", pre_norm);
    args.set(prefix + "learned_pos", learned);
  }
  args.set("decoder_output_dim", c.decoder_embed_dim);
  args.set("decoder_input_dim", c.decoder_embed_dim);
  args.set("dropout", c.dropout);
  args.set("attention_dropout", c.attention_dropout);
  args.set("share_all_embeddings", c.share_all_embeddings);
  args.set("share_decoder_input_output_embed", c.share_decoder_input_output_embed);
  args.set("max_source_positions", c.max_source_positions);
  args.set("max_target_positions", c.max_target_positions);
  args.set("no_token_positional_embeddings", false);
  args.set("adaptive_softmax_cutoff", data::pickle_none());
  args.set("tie_adaptive_weights", false);
  if (family == Family::Transformer) {
    args.set("activation_fn", "relu");
    args.set("activation_dropout", c.activation_dropout);
    args.set("no_scale_embedding", c.no_scale_embedding);
    args.set("no_decoder_final_norm", c.no_decoder_final_norm);
    args.set("layernorm_embedding", false);
    args.set("adaptive_input", false);
    args.set("cross_self_attention", false);
  } else {
    args.set("relu_dropout", c.activation_dropout);
    args.set("encoder_conv_type", c.encoder_conv_type);
    args.set("decoder_conv_type", c.decoder_conv_type);
    args.set("encoder_kernel_size_list", kernel_list(c.encoder_kernel_size_list, c.encoder_layers));
    args.set("decoder_kernel_size_list", kernel_list(c.decoder_kernel_size_list, c.decoder_layers));
    args.set("encoder_conv_dim", c.encoder_conv_dim > 0 ? c.encoder_conv_dim : c.encoder_embed_dim);
    args.set("decoder_conv_dim", c.decoder_conv_dim > 0 ? c.decoder_conv_dim : c.decoder_embed_dim);
    args.set("encoder_glu", c.encoder_glu);
    args.set("decoder_glu", c.decoder_glu);
    args.set("weight_softmax", c.weight_softmax);
    args.set("weight_dropout", c.weight_dropout);
    args.set("input_dropout", c.input_dropout);
  }
  return args.object();
}

// fairseq's name of a weight: a LightConv encoder layer's LayerNorms are layer_norm1/2 there.
std::string fairseq_name(const std::string& name, Family family) {
  return family == Family::LightConv && name.starts_with("encoder.layers.") ? lightconv_layer_norm_name(name, true)
                                                                            : name;
}

// What fairseq's modules hold besides the weights (see the header).
NamedTensors fairseq_buffers(const nn::TransformerConfig& c, Family family) {
  NamedTensors buffers;
  const double version = family == Family::Transformer ? 3.0 : 2.0;
  for (const auto& [side, learned] : {std::pair{"encoder", c.encoder_learned_pos}, std::pair{"decoder", c.decoder_learned_pos}}) {
    buffers.emplace_back(std::string(side) + ".version", full({1}, version));
    if (!learned) buffers.emplace_back(std::string(side) + ".embed_positions._float_tensor", zeros({1}));
  }
  if (family != Family::LightConv) return buffers;
  for (const auto& [side, type, layers, conv_dim, embed_dim] :
       {std::tuple{"encoder", c.encoder_conv_type, c.encoder_layers, c.encoder_conv_dim, c.encoder_embed_dim},
        std::tuple{"decoder", c.decoder_conv_type, c.decoder_layers, c.decoder_conv_dim, c.decoder_embed_dim}})
    if (type == "dynamic")
      for (int64_t layer = 0; layer < layers; ++layer)
        buffers.emplace_back(fmt::format("{}.layers.{}.conv.conv_bias", side, layer),
                             zeros({1, 1, conv_dim > 0 ? conv_dim : embed_dim}));
  return buffers;
}

bool any_kernel_wider_than_one(const std::vector<int64_t>& widths) {
  for (int64_t width : widths)
    if (width > 1) return true;
  return false;
}

}  // namespace

std::vector<ExportedTensor> fairseq_tensors(const nn::TransformerConfig& config, const NamedTensors& weights) {
  const Family family = family_of(config);
  std::vector<ExportedTensor> tensors;
  for (const auto& [name, weight] : weights) tensors.push_back({fairseq_name(name, family), name, weight});
  for (const auto& [name, buffer] : fairseq_buffers(config, family)) tensors.push_back({name, "", buffer});
  return tensors;
}

FairseqExport fairseq_checkpoint_of(const FairseqExportSource& source) {
  const nn::TransformerConfig& c = source.config;
  const Family family = family_of(c);
  refuse_what_fairseq_lacks(c, family);
  FairseqExport exported;
  exported.arch = family == Family::Transformer ? "transformer" : "lightconv";
  if (family == Family::LightConv && c.decoder_conv_type == "dynamic" && !c.fairseq_dynamic_softmax_span &&
      any_kernel_wider_than_one(c.decoder_kernel_size_list))
    exported.notes.push_back(
        "the DynamicConv decoder was trained with its softmax over all K taps; fairseq's beam search computes the "
        "same, its full forward (training, validation, --score-reference) renormalises the taps of a target "
        "shorter than K over its length (docs/models.md §3.1)");
  if (c.source_word_dropout > 0 || c.target_word_dropout > 0)
    exported.notes.push_back("word dropout is attnlab's: training on in fairseq will not use it");

  const std::vector<ExportedTensor> tensors = fairseq_tensors(c, source.weights);
  Attributes model;
  for (const ExportedTensor& tensor : tensors)
    model.emplace_back(data::pickle_string(tensor.fairseq_name), exported.file.tensor(tensor.tensor));
  const PickleRef state_dict = data::pickle_ordered_dict(std::move(model));

  const PickleRef best = source.best_loss ? data::pickle_float(*source.best_loss) : data::pickle_none();
  Attributes history = {
      {data::pickle_string("criterion_name"), data::pickle_string(fairseq_criterion_class(source.criterion))},
      {data::pickle_string("lr_scheduler_state"), data::pickle_dict({{data::pickle_string("best"), best}})},
      {data::pickle_string("num_updates"), data::pickle_int(source.num_updates)},
  };
  std::optional<FairseqOptimizerState> optimizer;
  if (source.optimizer) {
    optimizer = fairseq_optimizer_state(*source.optimizer, fairseq_parameters(tensors), exported.file);
    history.emplace_back(data::pickle_string("optimizer_name"), data::pickle_string(optimizer->optimizer_name));
  }
  const PickleRef extra_state = data::pickle_dict({
      {data::pickle_string("epoch"), data::pickle_int(source.epoch)},
      {data::pickle_string("train_iterator"),
       data::pickle_dict({{data::pickle_string("epoch"), data::pickle_int(source.epoch)},
                          {data::pickle_string("iterations_in_epoch"), data::pickle_int(0)}})},
      {data::pickle_string("val_loss"), best},
  });
  Attributes root = {
      {data::pickle_string("args"), fairseq_args(source, family)},
      {data::pickle_string("model"), state_dict},
      {data::pickle_string("optimizer_history"), data::pickle_list({data::pickle_dict(std::move(history))})},
      {data::pickle_string("extra_state"), extra_state},
  };
  if (optimizer) root.emplace_back(data::pickle_string("last_optimizer_state"), optimizer->state);
  exported.root = data::pickle_dict(std::move(root));
  return exported;
}

}  // namespace attn::app
