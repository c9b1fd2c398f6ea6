// The LightConv / DynamicConv block as a token mixer (Wu et al. 2019, "Pay Less Attention
// with Lightweight and Dynamic Convolutions"; docs/models.md §3.1, §3.3, §3.5):
//
//   u = GLU(W1 · InputDropout(x) + b1)      (W1: D → 2C with GLU, value ⊙ σ(gate); else D → C)
//   u[t] = 0 at source pads                  (encoder)
//   O[t,c] = Σ_j W̃[t,h(c),j] · u[t+j−P, c]  (H heads of C/H channels; u = 0 outside the sentence)
//   y = W2 O + b2                            (W2: C → D)
//
// with P = (K−1)/2 (encoder, centred) or K−1 (decoder, causal) and the taps
//   LightConv:   W̃ = DropConnect(softmax_j(W[h,:]))            W ∈ ℝ^{H×K} shared over time
//   DynamicConv: W̃ = DropConnect(softmax_j(W_dyn u[t])[h,:])    W_dyn ∈ ℝ^{HK×C}, no bias
// softmax over all K taps by default (a sentence's output depends on it alone); with
// fairseq_softmax_span a causal DynamicConv renormalises over the last T taps when K > T,
// as fairseq does (its outputs then depend on the batch's padded length). DropConnect is
// inverted dropout on the normalised taps, one mask per (b, t, h, j), off at evaluation.
// The convolution itself is the fused banded op of autograd/fused/banded_conv.hpp.
//
// fairseq names (registered inline in the layer): linear1, conv.weight [H,1,K] (LightConv)
// or conv.weight_linear.weight [HK, C] (DynamicConv), linear2. Init: Xavier-uniform, zero
// biases. Decoding keeps the last K−1 conv inputs u per sequence: a step is the last row
// of the full forward. Inspection returns the implied map: the taps on the band of positions
// each output reads, A[t, t + j − P] = W̃[t, j], zero at padded inputs.
#pragma once
#include <memory>

#include "nn/layers/linear.hpp"
#include "nn/mixers/mixer_registry.hpp"

namespace attn::nn {

// The convolution's parameters, under fairseq's module name `conv`.
class ConvTaps : public Module {
 public:
  ConvTaps(bool dynamic, int64_t conv_dim, int64_t heads, int64_t kernel_size);
  Tensor weight;                         // LightConv: [H, 1, K]
  std::shared_ptr<Linear> weight_linear;  // DynamicConv: C → H·K, no bias
};

class ConvBlock : public TokenMixer {
 public:
  explicit ConvBlock(const MixerOptions& options);

  Tensor forward(const Tensor& x, const MixerContext& ctx) override;
  std::unique_ptr<MixerState> init_state(int64_t batch, const MixerContext& ctx) override;
  Tensor step(const Tensor& x, MixerState& state, const MixerContext& ctx) override;
  void reorder(MixerState& state, const Tensor& order) override;
  std::string kind() const override { return dynamic_ ? "dynamicconv" : "lightconv"; }

  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<ConvTaps> conv;

 private:
  Tensor conv_input(const Tensor& x) const;  // InputDropout, linear1, GLU: [B, T, D] -> [B, T, C]
  // Normalised taps: LightConv [H, K]; DynamicConv [B, T, H, K] from u [B, T, C]. `span` > 0
  // renormalises over the last `span` taps only (fairseq's causal DynamicConv when K > T).
  Tensor taps(const Tensor& u, int64_t span = 0) const;
  // Inspection only: the normalised taps laid on the band, [B, H, T, T] (asked for through
  // MixerContext::attention_weights).
  Tensor implied_weights(const Tensor& taps, const Tensor& u, int64_t padding_left, const MixerContext& ctx) const;

  bool dynamic_;
  int64_t conv_dim_, num_heads_, kernel_size_;
  bool glu_, weight_softmax_, fairseq_softmax_span_;
  double weight_dropout_, input_dropout_;
};

}  // namespace attn::nn
