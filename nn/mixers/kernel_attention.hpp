// Kernelized and decaying attention as a token mixer (docs/models.md §5): kind
// `kernel:<feature map>+<update rule>`, e.g. `kernel:t2r+additive`, `kernel:elu+additive`,
// `kernel:rfa+gated`, `kernel:identity+decay`. Per head, with d = D/H:
//
//   q = W_q x + b_q,  k = W_k m + b_k,  v = W_v m + b_v          (softmax attention's projections)
//   y = rule(φ(q), φ(k), v),  out = W_o concat_h(y) + b_o
//
// φ from nn/mixers/kernel/feature_map.hpp, the rule from nn/mixers/kernel/update_rule.hpp.
// The projections keep softmax attention's names (q_proj, k_proj, v_proj, out_proj), so a
// trained softmax model's weights carry over when a layer is swapped (T2R's
// swap-then-finetune); the map's and rule's own parameters sit beside them under the T2R
// code's names (fc3 / fc4, gate_proj, gate_k_proj, gate_v_proj).
//
// Training runs the parallel forms: non-causal (encoder self, cross: S and z summed once)
// or causal (decoder self: the fused scan, memory O(T/C·d_v·m) per head, never B×H×T×d_v×m).
// Decoding is recurrent: self-attention keeps S (and z) per head, O(d_v·m) whatever the
// length; cross-attention computes S and z once from the encoder output. Maps that can fold
// into the projections (T2R) are folded when decoding starts, W̃ = W_φ W_q (Eq. 8).
#pragma once
#include <memory>

#include "nn/mixers/kernel/feature_map.hpp"
#include "nn/mixers/kernel/update_rule.hpp"
#include "nn/mixers/multi_head_mixer.hpp"

namespace attn::nn {

// Checks a `kernel:<map>+<rule>` kind for a place before anything is built: known map and
// rule, a normalised rule only with a map of kernel features, a causal-only rule only where
// attention is causal (decoder self-attention). Throws naming the kind and what the place needs.
void check_kernel_mixer_kind(const std::string& kind, bool causal, bool cross_attention);

class KernelAttention : public MultiHeadMixer {
 public:
  explicit KernelAttention(const MixerOptions& options);

  Tensor forward(const Tensor& x, const MixerContext& ctx) override;
  std::unique_ptr<MixerState> init_state(int64_t batch, const MixerContext& ctx) override;
  Tensor step(const Tensor& x, MixerState& state, const MixerContext& ctx) override;
  void reorder(MixerState& state, const Tensor& order) override;
  std::string kind() const override { return kind_; }

  std::shared_ptr<FeatureMap> feature_map;
  std::shared_ptr<UpdateRule> rule;

 private:
  // φ(k) [B, H, T, m] with the features of padded keys set to 0.
  Tensor masked_key_features(const Tensor& phi, const Tensor& key_padding_mask) const;
  // [B, T, H·w] -> [B, H, T, w]
  Tensor heads_of(const Tensor& t) const;
  // Inspection only: the implied map [B, H, Tq, Tk], the weight each value gets in each output
  // (the rule's answer to unit values; asked for through MixerContext::attention_weights).
  Tensor implied_weights(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& key_decay,
                         bool causal) const;

  std::string kind_;
  DenominatorGuard guard_;
};

}  // namespace attn::nn
