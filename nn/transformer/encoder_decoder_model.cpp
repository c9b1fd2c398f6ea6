#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::nn {
namespace {

const TransformerConfig& validated(const TransformerConfig& c) {
  c.validate();
  return c;
}

}  // namespace

EncoderDecoderModel::EncoderDecoderModel(const TransformerConfig& c) : config_(validated(c)) {
  auto source_embed = std::make_shared<Embedding>(c.src_vocab_size, c.encoder_embed_dim, c.padding_idx, c.fix_norm);
  auto target_embed = c.share_all_embeddings
                          ? source_embed
                          : std::make_shared<Embedding>(c.tgt_vocab_size, c.decoder_embed_dim, c.padding_idx, c.fix_norm);
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(c, source_embed));
  decoder = register_module("decoder", std::make_shared<TransformerDecoder>(c, target_embed));
}

Tensor EncoderDecoderModel::forward(const Tensor& src_tokens, const Tensor& prev_output_tokens, AttentionMaps* maps) {
  EncoderOutput encoder_out = encoder->forward(src_tokens, maps ? &maps->encoder_self : nullptr);
  return decoder->forward(prev_output_tokens, encoder_out, maps);
}

Tensor EncoderDecoderModel::extract_features(const Tensor& src_tokens, const Tensor& prev_output_tokens) {
  return decoder->extract_features(prev_output_tokens, encoder->forward(src_tokens));
}

EncoderOutput EncoderDecoderModel::encode(const Tensor& src_tokens, std::vector<Tensor>* encoder_maps) {
  return encoder->forward(src_tokens, encoder_maps);
}

DecoderState EncoderDecoderModel::init_decoder_state(const EncoderOutput& encoder_out) {
  return decoder->init_state(encoder_out);
}

Tensor EncoderDecoderModel::decode_step(const Tensor& tokens, DecoderState& state, Tensor* cross_attention,
                                        Tensor* features) {
  return log_softmax(decoder->step(tokens, state, cross_attention, features), -1);
}

void EncoderDecoderModel::reorder(DecoderState& state, const Tensor& order) { decoder->reorder(state, order); }

}  // namespace attn::nn
