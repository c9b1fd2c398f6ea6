// Linformer attention as a token mixer (Wang et al. 2020, "Linformer: Self-Attention with
// Linear Complexity"; docs/models.md §4), for encoder self-attention and encoder–decoder
// attention. The keys and values are compressed along the sequence axis by learned
// E, F ∈ ℝ^{k×n_max} before attending:
//
//   K = (W_k m + b_k) with pad rows zeroed,   V likewise       (m: [M, D] keys input)
//   K̄ = E_m K ∈ ℝ^{k×D},   V̄ = F_m V                          (E_m: E's columns for the M keys)
//   per head: P̄ = AttnDropout(softmax(q K̄ᵀ / √d)) ∈ ℝ^{N×k},   y = W_o concat_h(P̄ V̄) + b_o
//
// Cost O(N·k·d) instead of O(N·M·d); k ≥ the sentence length compresses nothing (fairseq's
// k = 256 of n_max = 1024 leaves every MT sentence uncompressed). Sources are left-padded,
// so column p of E meets the sentence's p-th real token (its position within the sentence,
// counted over real tokens only): a sentence's output is the same alone and in any batch.
// E acts on all D channels before the head split, so it is shared by the heads.
//
// Sharing (fairseq flags): none (compress_k = E, compress_v = F), key-value (F = E,
// --shared-kv-compressed), layerwise (one E for K and V in every layer, the stack's
// `compress_layer`, --shared-layer-kv-compressed). Init: PyTorch's Linear default
// U(±1/√n_max), or Xavier on request; --freeze-compress keeps E, F fixed. Linformer cannot
// be causal (every compressed row mixes all positions): decoder self-attention refuses it.
// Decoding caches K̄ and V̄ of the encoder output once per sentence.
// fairseq names: q_proj, k_proj, v_proj, out_proj, compress_k, compress_v.
#pragma once
#include <memory>

#include "nn/layers/linear.hpp"
#include "nn/mixers/mixer_registry.hpp"

namespace attn::nn {

class LinformerAttention : public TokenMixer {
 public:
  explicit LinformerAttention(const MixerOptions& options);

  Tensor forward(const Tensor& x, const MixerContext& ctx) override;
  std::unique_ptr<MixerState> init_state(int64_t batch, const MixerContext& ctx) override;
  Tensor step(const Tensor& x, MixerState& state, const MixerContext& ctx) override;
  void reorder(MixerState& state, const Tensor& order) override;
  std::string kind() const override { return "linformer"; }

  std::shared_ptr<Linear> q_proj, k_proj, v_proj, out_proj;
  std::shared_ptr<Linear> compress_k, compress_v;  // E and F [k, n_max]; compress_v null when shared

 private:
  struct Compressed {
    Tensor keys, values;  // K̄, V̄ split into heads: [B, H, k, d]
    Tensor positions;     // E's column of each key, int64 [B, M]; for the implied map
  };
  Compressed compress(const Tensor& memory, const Tensor& key_padding_mask) const;
  Tensor attend(const Tensor& x, const Compressed& c, const Tensor& key_padding_mask, Tensor* weights) const;
  Tensor split_heads(const Tensor& x) const;  // [B, T, D] -> [B, H, T, d]

  int64_t embed_dim_, num_heads_, head_dim_, max_seq_len_, k_;
  double attention_dropout_;
  bool cross_attention_;
};

// The layerwise-shared E of a stack (registered as `compress_layer`), or null unless
// options.linformer.shared_layer.
std::shared_ptr<Module> make_linformer_layer_compression(const MixerOptions& options);

}  // namespace attn::nn
