// One Transformer decoder layer (docs/models.md §1.4): masked self-attention, then
// encoder–decoder attention, then FFN, each post-norm or pre-norm as in the encoder layer.
// fairseq names: self_attn, self_attn_layer_norm, encoder_attn, encoder_attn_layer_norm,
// fc1, fc2, final_layer_norm; a LightConv/DynamicConv layer has its conv block inline
// (linear1, conv, linear2) with conv_layer_norm (layer_wiring.hpp, docs/models.md §3.3). Incremental decoding runs one token through the same wiring
// with the mixers' step() (KV cache; encoder K/V computed once).
#pragma once
#include <memory>

#include "nn/layers/feed_forward.hpp"
#include "nn/layers/normalization.hpp"
#include "nn/mixers/token_mixer.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::nn {

// The decoding state of one decoder layer.
struct DecoderLayerState {
  std::unique_ptr<MixerState> self_attn;
  std::unique_ptr<MixerState> encoder_attn;
};

class TransformerDecoderLayer : public Module {
 public:
  // `layer`: the index in the stack; `cross_shared`: the stack's module shared by every
  // layer's cross-attention mixer, if the family has one.
  TransformerDecoderLayer(const TransformerConfig& config, int64_t layer, std::shared_ptr<Module> cross_shared = nullptr);
  // x [B, T, D]; memory [B, S, D] with memory_padding_mask Bool [B, S] (or undefined);
  // self_padding_mask Bool [B, T] or undefined. Optional inspection outputs.
  Tensor forward(const Tensor& x, const Tensor& self_padding_mask, const Tensor& memory,
                 const Tensor& memory_padding_mask, Tensor* self_attention = nullptr,
                 Tensor* cross_attention = nullptr);

  DecoderLayerState init_state(int64_t batch, const Tensor& memory, const Tensor& memory_padding_mask);
  // x [B, 1, D] -> [B, 1, D], appending to the state.
  Tensor step(const Tensor& x, DecoderLayerState& state, const Tensor& memory_padding_mask,
              Tensor* cross_attention = nullptr);
  void reorder(DecoderLayerState& state, const Tensor& order);

  std::shared_ptr<TokenMixer> self_attn;
  std::shared_ptr<Normalization> self_attn_layer_norm;
  std::shared_ptr<TokenMixer> encoder_attn;
  std::shared_ptr<Normalization> encoder_attn_layer_norm;
  FeedForward ffn;
  std::shared_ptr<Normalization> final_layer_norm;

 private:
  // The three sublayers with their residual wiring, given how to run the two attentions
  // (parallel forward or one decoding step).
  template <typename SelfAttention, typename CrossAttention>
  Tensor run_sublayers(const Tensor& x, SelfAttention&& self_attention, CrossAttention&& cross_attention);

  double dropout_;
  bool normalize_before_;
};

}  // namespace attn::nn
