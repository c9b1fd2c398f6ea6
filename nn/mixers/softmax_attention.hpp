// Multi-head softmax attention as a token mixer (docs/models.md §1.4; Vaswani et al. 2017,
// §3.2.2). Per head h, with d = D/H and head h owning channels [h·d, (h+1)·d):
//
//   q = (W_q x + b_q)·d^{-1/2}   (scaled after the bias)     k = W_k m + b_k     v = W_v m + b_v
//   A = AttnDropout(softmax(q kᵀ + mask)),   y = W_o concat_h(A v) + b_o
//
// with m = x for self-attention and m = the encoder output for cross-attention. Masks are
// additive −∞ at padded keys and (causal) future keys; the core is the fused op of
// autograd/fused/scaled_dot_product.hpp (the d^{-1/2} is applied there, to (W_q x + b_q) kᵀ).
// Init: W_q, W_k, W_v Xavier-uniform with gain 1/√2, W_o Xavier-uniform, biases 0.
// fairseq names: q_proj, k_proj, v_proj, out_proj.
//
// Incremental decoding: self-attention keeps a K/V cache [B, H, t, d] that grows by one
// position per step; cross-attention projects the encoder output to K/V once in
// init_state(). Inspection returns the probabilities [B, H, Tq, Tk] before dropout.
#pragma once
#include <memory>

#include "nn/mixers/multi_head_mixer.hpp"

namespace attn::nn {

class SoftmaxAttention : public MultiHeadMixer {
 public:
  explicit SoftmaxAttention(const MixerOptions& options);

  Tensor forward(const Tensor& x, const MixerContext& ctx) override;
  std::unique_ptr<MixerState> init_state(int64_t batch, const MixerContext& ctx) override;
  Tensor step(const Tensor& x, MixerState& state, const MixerContext& ctx) override;
  void reorder(MixerState& state, const Tensor& order) override;
  std::string kind() const override { return "softmax"; }

  // q_proj, k_proj, v_proj, out_proj: MultiHeadMixer.

 private:
  // The fused attention over (q, k, v) heads, then out_proj; stores the weights when asked.
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask, bool causal,
                Tensor* weights);
};

}  // namespace attn::nn
