#include "nn/transformer/transformer_encoder.hpp"

#include <cmath>

#include "nn/layers/word_dropout.hpp"
#include "nn/transformer/layer_wiring.hpp"
#include "nn/transformer/padding_mask.hpp"

namespace attn::nn {

TransformerEncoder::TransformerEncoder(const TransformerConfig& c, std::shared_ptr<Embedding> embed)
    : embed_scale_(c.no_scale_embedding ? 1.0 : std::sqrt(double(c.encoder_embed_dim))),
      dropout_(c.dropout),
      word_dropout_(c.source_word_dropout),
      keep_embeddings_(c.lexical_model),
      padding_idx_(c.padding_idx) {
  ATTN_CHECK(embed && embed->weight.size(1) == c.encoder_embed_dim,
             "TransformerEncoder: token embedding width must be encoder_embed_dim {}", c.encoder_embed_dim);
  embed_tokens = register_module("embed_tokens", std::move(embed));
  embed_positions = register_module(
      "embed_positions", std::make_shared<PositionalEmbedding>(c.max_source_positions, c.encoder_embed_dim,
                                                               c.padding_idx, c.encoder_learned_pos));
  const StackShared shared = stack_shared_module(c, MixerPlace::EncoderSelf, c.encoder_layers);
  if (shared.module) register_module(shared.name, shared.module);
  for (int64_t i = 0; i < c.encoder_layers; ++i)
    layers.push_back(register_module("layers." + std::to_string(i),
                                     std::make_shared<TransformerEncoderLayer>(c, i, shared.module)));
  if (c.encoder_normalize_before) layer_norm = register_module("layer_norm", make_normalization(c.scale_norm, c.encoder_embed_dim));
}

EncoderOutput TransformerEncoder::forward(const Tensor& src_tokens, std::vector<Tensor>* maps) {
  ATTN_CHECK(src_tokens.dim() == 2 && src_tokens.dtype() == DType::Int64,
             "TransformerEncoder: src_tokens must be int64 [B, S], got {} {}", dtype_name(src_tokens.dtype()),
             src_tokens.shape().str());
  EncoderOutput result;
  result.padding_mask = padding_mask_if_any(src_tokens, padding_idx_);

  const Tensor embedded = embed_tokens->forward(src_tokens);
  if (keep_embeddings_) result.embeddings = embedded * embed_scale_;
  Tensor x = word_dropout(embedded, word_dropout_, is_training()) * embed_scale_ + embed_positions->forward(src_tokens);
  x = dropout(x, dropout_, is_training());
  if (result.padding_mask.defined()) x = masked_fill(x, result.padding_mask.unsqueeze(-1), 0.0);  // §1.2

  if (maps) maps->assign(layers.size(), Tensor());
  for (size_t i = 0; i < layers.size(); ++i)
    x = layers[i]->forward(x, result.padding_mask, maps ? &(*maps)[i] : nullptr);
  if (layer_norm) x = layer_norm->forward(x);
  result.out = x;
  return result;
}

}  // namespace attn::nn
