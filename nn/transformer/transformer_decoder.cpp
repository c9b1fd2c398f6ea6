#include "nn/transformer/transformer_decoder.hpp"

#include <cmath>

#include "nn/layers/init.hpp"
#include "nn/layers/word_dropout.hpp"
#include "nn/transformer/layer_wiring.hpp"
#include "nn/transformer/padding_mask.hpp"

namespace attn::nn {

int64_t DecoderState::attention_bytes() const {
  int64_t bytes = 0;
  for (const DecoderLayerState& layer : layers)
    for (const MixerState* mixer : {layer.self_attn.get(), layer.encoder_attn.get()})
      if (mixer) bytes += mixer->size_bytes();
  return bytes;
}
namespace {

// Holds the output matrix under the fairseq name `output_projection.weight`; when tied it
// is the embedding weight itself, registered a second time (named_parameters lists it once).
class OutputProjection : public Module {
 public:
  explicit OutputProjection(Tensor w) { weight = register_parameter("weight", std::move(w)); }
  Tensor weight;
};

}  // namespace

TransformerDecoder::TransformerDecoder(const TransformerConfig& c, std::shared_ptr<Embedding> embed)
    : embed_scale_(c.no_scale_embedding ? 1.0 : std::sqrt(double(c.decoder_embed_dim))),
      dropout_(c.dropout),
      word_dropout_(c.target_word_dropout),
      padding_idx_(c.padding_idx),
      output_rows_(c.tgt_vocab_size) {
  const int64_t dim = c.decoder_embed_dim;
  ATTN_CHECK(embed && embed->weight.size(1) == dim, "TransformerDecoder: token embedding width must be decoder_embed_dim {}",
             dim);
  embed_tokens = register_module("embed_tokens", std::move(embed));
  embed_positions = register_module(
      "embed_positions",
      std::make_shared<PositionalEmbedding>(c.max_target_positions, dim, c.padding_idx, c.decoder_learned_pos));
  const StackShared cross_shared = stack_shared_module(c, MixerPlace::Cross, c.decoder_layers);
  if (cross_shared.module) register_module(cross_shared.name, cross_shared.module);
  for (int64_t i = 0; i < c.decoder_layers; ++i)
    layers.push_back(register_module("layers." + std::to_string(i),
                                     std::make_shared<TransformerDecoderLayer>(c, i, cross_shared.module)));
  if (c.decoder_normalize_before && !c.no_decoder_final_norm)
    layer_norm = register_module("layer_norm", make_normalization(c.scale_norm, dim));
  const bool tied = c.share_decoder_input_output_embed || c.share_all_embeddings;
  Tensor weight = tied ? embed_tokens->weight : init::normal({c.tgt_vocab_size, dim}, 1.0 / std::sqrt(double(dim)));
  output_projection = register_module("output_projection", std::make_shared<OutputProjection>(weight))->weight;
  if (c.lexical_model) lexical_model = register_module("lexical_model", std::make_shared<LexicalModel>(dim));
}

Tensor TransformerDecoder::embed(const Tensor& tokens, const Tensor& positions) const {
  return dropout(word_dropout(embed_tokens->forward(tokens), word_dropout_, is_training()) * embed_scale_ + positions,
                 dropout_, is_training());
}

Tensor TransformerDecoder::normalize(const Tensor& hidden) const {
  return layer_norm ? layer_norm->forward(hidden) : hidden;
}

Tensor TransformerDecoder::output_states(const Tensor& hidden, const Tensor& last_cross_attention,
                                         const EncoderOutput& encoder_out) const {
  const Tensor states = normalize(hidden);
  if (!lexical_model) return states;
  ATTN_CHECK(encoder_out.embeddings.defined() && last_cross_attention.defined(),
             "TransformerDecoder: the lexical model needs the source embeddings and the last cross-attention");
  return states + lexical_model->forward(ops::mean(last_cross_attention, {1}), encoder_out.embeddings);
}

Tensor TransformerDecoder::output_layer(const Tensor& features) const {
  // The target words' rows only (§1.2); FixNorm (§1.4.1) applies to them as to the
  // embedding's, tied or not.
  const Tensor rows = output_projection.size(0) == output_rows_ ? output_projection
                                                                 : narrow(output_projection, 0, 0, output_rows_);
  return linear(features, embed_tokens->fix_norm ? unit_rows(rows) : rows, Tensor());
}

Tensor TransformerDecoder::forward(const Tensor& prev_output_tokens, const EncoderOutput& encoder_out,
                                   AttentionMaps* maps) {
  return output_layer(extract_features(prev_output_tokens, encoder_out, maps));
}

Tensor TransformerDecoder::extract_features(const Tensor& prev_output_tokens, const EncoderOutput& encoder_out,
                                            AttentionMaps* maps) {
  ATTN_CHECK(prev_output_tokens.dim() == 2 && prev_output_tokens.dtype() == DType::Int64,
             "TransformerDecoder: prev_output_tokens must be int64 [B, T], got {} {}",
             dtype_name(prev_output_tokens.dtype()), prev_output_tokens.shape().str());
  ATTN_CHECK(encoder_out.out.defined() && encoder_out.out.size(0) == prev_output_tokens.size(0),
             "TransformerDecoder: encoder output {} does not match the {} target sentences",
             encoder_out.out.defined() ? encoder_out.out.shape().str() : "(none)", prev_output_tokens.size(0));
  Tensor self_padding_mask = padding_mask_if_any(prev_output_tokens, padding_idx_);

  Tensor x = embed(prev_output_tokens, embed_positions->forward(prev_output_tokens));
  if (maps) {
    maps->decoder_self.assign(layers.size(), Tensor());
    maps->cross.assign(layers.size(), Tensor());
  }
  Tensor last_cross;
  for (size_t i = 0; i < layers.size(); ++i) {
    Tensor* cross = maps ? &maps->cross[i] : i + 1 == layers.size() && lexical_model ? &last_cross : nullptr;
    x = layers[i]->forward(x, self_padding_mask, encoder_out.out, encoder_out.padding_mask,
                           maps ? &maps->decoder_self[i] : nullptr, cross);
  }
  return output_states(x, maps ? maps->cross.back() : last_cross, encoder_out);
}

DecoderState TransformerDecoder::init_state(const EncoderOutput& encoder_out) {
  DecoderState state;
  state.encoder = encoder_out;
  for (auto& layer : layers)
    state.layers.push_back(layer->init_state(state.batch(), encoder_out.out, encoder_out.padding_mask));
  return state;
}

Tensor TransformerDecoder::step(const Tensor& tokens, DecoderState& state, Tensor* cross_attention, Tensor* features) {
  const int64_t batch = state.batch();
  ATTN_CHECK(tokens.dim() == 1 && tokens.size(0) == batch && tokens.dtype() == DType::Int64,
             "TransformerDecoder::step: tokens must be int64 [{}], got {} {}", batch, dtype_name(tokens.dtype()),
             tokens.shape().str());
  Tensor x = embed(tokens.view({batch, 1}), embed_positions->at_position(state.length + 1, batch, tokens.device()));
  Tensor last_cross;
  const bool keep_cross = cross_attention || lexical_model;
  for (size_t i = 0; i < layers.size(); ++i) {
    const bool last = i + 1 == layers.size();
    x = layers[i]->step(x, state.layers[i], state.encoder.padding_mask, last && keep_cross ? &last_cross : nullptr);
  }
  if (cross_attention) *cross_attention = ops::mean(last_cross, {1}).view({batch, -1});
  ++state.length;
  const Tensor states = output_states(x, last_cross, state.encoder).view({batch, -1});
  if (features) *features = states;
  return output_layer(states);
}

void TransformerDecoder::reorder(DecoderState& state, const Tensor& order) {
  state.encoder.out = ops::index_select(state.encoder.out, 0, order);
  if (state.encoder.padding_mask.defined())
    state.encoder.padding_mask = ops::index_select(state.encoder.padding_mask, 0, order);
  if (state.encoder.embeddings.defined())
    state.encoder.embeddings = ops::index_select(state.encoder.embeddings, 0, order);
  for (size_t i = 0; i < layers.size(); ++i) layers[i]->reorder(state.layers[i], order);
}

}  // namespace attn::nn
