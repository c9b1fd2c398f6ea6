// The encoder–decoder Transformer (docs/models.md §1.1–1.5, §2; Vaswani et al. 2017,
// Ott et al. 2018) with fairseq's state-dict names:
//   encoder.embed_tokens.weight, encoder.layers.N.self_attn.{q,k,v,out}_proj.{weight,bias},
//   encoder.layers.N.{self_attn_layer_norm,fc1,fc2,final_layer_norm}.*,
//   decoder.embed_tokens.weight, decoder.layers.N.{self_attn,encoder_attn}.*_proj.*,
//   decoder.layers.N.{self_attn_layer_norm,encoder_attn_layer_norm,fc1,fc2,final_layer_norm}.*,
//   decoder.output_projection.weight, and encoder/decoder.layer_norm.* for pre-norm models.
// Tied weights appear under every name in state_dict(), once in named_parameters().
//
// Batch-first layout: src_tokens [B, S] int64 (left-padded, ending in </s>),
// prev_output_tokens [B, T] int64 (</s> y_1 … y_{n−1}, right-padded), §1.1.
#pragma once
#include <memory>

#include "nn/transformer/attention_maps.hpp"
#include "nn/transformer/transformer_config.hpp"
#include "nn/transformer/transformer_decoder.hpp"
#include "nn/transformer/transformer_encoder.hpp"

namespace attn::nn {

class EncoderDecoderModel : public Module {
 public:
  // Validates the config (vocabulary sizes must be set) and initialises every weight from
  // the default generator (attn::manual_seed fixes them).
  explicit EncoderDecoderModel(const TransformerConfig& config);

  // Teacher-forced forward: logits [B, T, V]. `maps` (optional) receives every layer's and
  // head's attention probabilities.
  Tensor forward(const Tensor& src_tokens, const Tensor& prev_output_tokens, AttentionMaps* maps = nullptr);
  // The same pass without the output projection: the decoder's output states [B, T, D] (the
  // keys of a kNN-MT datastore, nn/search/knn_datastore.hpp).
  Tensor extract_features(const Tensor& src_tokens, const Tensor& prev_output_tokens);

  // --- decoding (use under NoGradGuard, in eval mode) ---
  EncoderOutput encode(const Tensor& src_tokens, std::vector<Tensor>* encoder_maps = nullptr);
  DecoderState init_decoder_state(const EncoderOutput& encoder_out);
  // tokens int64 [B] (the last token of each hypothesis) -> log-probabilities [B, V] of the
  // next token; cross_attention (optional): last layer, head-averaged, [B, S]; features
  // (optional): the decoder's output states [B, D], as forward's.
  Tensor decode_step(const Tensor& tokens, DecoderState& state, Tensor* cross_attention = nullptr,
                     Tensor* features = nullptr);
  // Keeps/duplicates hypotheses: new row i = old row order[i] (int64 [B']), encoder rows included.
  void reorder(DecoderState& state, const Tensor& order);

  const TransformerConfig& config() const { return config_; }
  int64_t max_target_positions() const { return config_.max_target_positions; }

  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;

 private:
  TransformerConfig config_;
};

}  // namespace attn::nn
