// The Transformer decoder (docs/models.md §1.2–1.4): x_0 = Dropout(√D·E[prev] + PE[pos]),
// the decoder layers (causal self-attention, cross-attention, FFN), a final LayerNorm for
// pre-norm models (unless no_decoder_final_norm), and the output projection — tied to the
// input embedding (share_decoder_input_output_embed / share_all_embeddings, no bias) or
// its own `output_projection.weight` [V, D] drawn from N(0, 1/D). Tied to an embedding of
// more rows than the target vocabulary (share_all_embeddings with a target-first joined
// dictionary, docs/models.md §1.2), it uses the first tgt_vocab_size rows. With lexical_model the
// projection's input also holds the lexical model's term (docs/models.md §1.2.2).
//
// Incremental decoding: init_state() once per batch of sentences (cross-attention K/V
// from the encoder output), step() per token (the new token uses position row
// padding_idx + L where L counts the tokens fed so far, §1.3), reorder() for beam search.
#pragma once
#include <memory>
#include <vector>

#include "nn/layers/embedding.hpp"
#include "nn/layers/lexical_model.hpp"
#include "nn/layers/normalization.hpp"
#include "nn/layers/positional_embedding.hpp"
#include "nn/transformer/attention_maps.hpp"
#include "nn/transformer/decoder_layer.hpp"
#include "nn/transformer/transformer_encoder.hpp"

namespace attn::nn {

// Everything incremental decoding carries between steps. Move-only.
struct DecoderState {
  EncoderOutput encoder;                  // rows follow the hypotheses (reordered with them)
  std::vector<DecoderLayerState> layers;  // one per decoder layer
  int64_t length = 0;                     // tokens fed so far
  int64_t batch() const { return encoder.out.size(0); }
  // Bytes of every layer's self- and cross-attention state (MixerState::size_bytes): what
  // decoding memory grows with.
  int64_t attention_bytes() const;
};

class TransformerDecoder : public Module {
 public:
  TransformerDecoder(const TransformerConfig& config, std::shared_ptr<Embedding> embed_tokens);
  // prev_output_tokens int64 [B, T] (right-padded) -> logits [B, T, V]:
  // output_layer(extract_features(...)).
  Tensor forward(const Tensor& prev_output_tokens, const EncoderOutput& encoder_out, AttentionMaps* maps = nullptr);
  // The decoder's output states [B, T, D]: the layers and the final layer norm (if any), the
  // output projection's input.
  Tensor extract_features(const Tensor& prev_output_tokens, const EncoderOutput& encoder_out,
                          AttentionMaps* maps = nullptr);
  // output states [..., D] -> logits [..., V]
  Tensor output_layer(const Tensor& features) const;

  DecoderState init_state(const EncoderOutput& encoder_out);
  // tokens int64 [B] -> logits [B, V]. cross_attention (optional) receives the last
  // layer's cross-attention averaged over heads, [B, S] (for alignments); features
  // (optional) the output projection's input [B, D], as forward's.
  Tensor step(const Tensor& tokens, DecoderState& state, Tensor* cross_attention = nullptr, Tensor* features = nullptr);
  void reorder(DecoderState& state, const Tensor& order);

  std::shared_ptr<Embedding> embed_tokens;
  std::shared_ptr<PositionalEmbedding> embed_positions;
  std::vector<std::shared_ptr<TransformerDecoderLayer>> layers;
  std::shared_ptr<Normalization> layer_norm;  // pre-norm with final norm only
  std::shared_ptr<LexicalModel> lexical_model;  // lexical_model only (§1.2.2)
  Tensor output_projection;               // [V, D]; the embedding weight itself when tied (V >= tgt_vocab_size)

 private:
  Tensor embed(const Tensor& tokens, const Tensor& positions) const;
  // the final layer norm, if any
  Tensor normalize(const Tensor& hidden) const;
  // The output projection's input from the last layer's states [B, T, D] and its cross-attention
  // [B, H, T, S] (used with lexical_model only): the final norm, plus the lexical term (§1.2.2).
  Tensor output_states(const Tensor& hidden, const Tensor& last_cross_attention, const EncoderOutput& encoder_out) const;

  double embed_scale_;
  double dropout_;
  double word_dropout_;  // §1.2.1
  int64_t padding_idx_;
  int64_t output_rows_;  // tgt_vocab_size
};

}  // namespace attn::nn
