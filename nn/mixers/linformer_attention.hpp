// Linformer attention as a token mixer (Wang et al. 2020, "Linformer: Self-Attention with
// Linear Complexity"; docs/models.md §4), for encoder self-attention and encoder–decoder
// attention. Learned E, F ∈ ℝ^{k×n_max} (n_max = max_seq_len) compress the keys and values
// along the sequence axis before attending. For sentence b of the batch, with m its keys
// input [M, D] and L_b its real (non-pad) keys:
//
//   K = W_k m + b_k,   V = W_v m + b_v                                     [M, D]
//   E_b[:, t] = E[:, p(t)] for a real key t, the p(t)-th real token of its sentence,
//             = 0 at pads (so pads add nothing, bias included)             [k, M]
//   K̄ = E_b K,   V̄ = F_b V                                                [k, D]
//   per head h (d = D/H): P̄_h = AttnDropout(softmax(q_h K̄_hᵀ / √d))      [N, k]
//   y = W_o concat_h(P̄_h V̄_h) + b_o
//
// Cost O(N·k·d) instead of O(N·M·d). k ≥ the sentence length compresses nothing (fairseq's
// k = 256 of n_max = 1024 leaves every MT sentence uncompressed, docs/models.md §4.1).
// Sources are left-padded, so p(t) = t − (M − L_b), not t (docs/models.md §4.1): a
// sentence's output is the same alone and in any batch. E acts on all D channels before the
// head split, so it is shared by the heads (headwise sharing is built in).
//
// Sharing (docs/models.md §4.3): none (compress_k = E, compress_v = F), key-value (F = E,
// shared_kv, --shared-kv-compressed), layerwise (one E for K and V in every layer: the
// stack's `compress_layer`, handed over in MixerOptions::shared and not registered here, so
// it is saved once; shared_layer, --shared-layer-kv-compressed). Init: PyTorch's Linear
// default U(±1/√n_max), or Xavier (xavier_init); freeze keeps E and F fixed.
//
// Linformer cannot be causal (every compressed row mixes all positions): decoder
// self-attention refuses it (docs/models.md §4.2). Decoding caches K̄, V̄ (and E_b) of the
// encoder output once per sentence (§4.5). Inspection returns the implied map over key
// positions, P̄ E_b [B, H, N, M] (zero at pads; before dropout).
// fairseq names: q_proj, k_proj, v_proj, out_proj, compress_k, compress_v.
#pragma once
#include <memory>

#include "nn/mixers/multi_head_mixer.hpp"

namespace attn::nn {

class LinformerAttention : public MultiHeadMixer {
 public:
  explicit LinformerAttention(const MixerOptions& options);

  Tensor forward(const Tensor& x, const MixerContext& ctx) override;
  std::unique_ptr<MixerState> init_state(int64_t batch, const MixerContext& ctx) override;
  Tensor step(const Tensor& x, MixerState& state, const MixerContext& ctx) override;
  void reorder(MixerState& state, const Tensor& order) override;
  std::string kind() const override { return "linformer"; }

  // q_proj, k_proj, v_proj, out_proj: MultiHeadMixer. E and F, weights [k, n_max]; compress_v is null when F = E (key-value or layerwise
  // sharing), and compress_k is the stack's module under layerwise sharing.
  std::shared_ptr<Linear> compress_k, compress_v;

 private:
  struct Compressed {
    Tensor keys, values;  // K̄, V̄ split into heads: [B, H, k, d]
    Tensor key_columns;   // E_b [B, k, M], for the implied map
  };
  Compressed compress(const Tensor& memory, const Tensor& key_padding_mask) const;
  Tensor attend(const Tensor& x, const Compressed& c, Tensor* weights) const;
  // Inspection only: P̄ [B, H, N, k] over key positions, P̄ E_b [B, H, N, M].
  Tensor implied_weights(const Tensor& probabilities, const Tensor& key_columns) const;

  int64_t max_seq_len_, k_;
};

// The layerwise-shared E of a stack (a bias-free Linear(max_seq_len → k), which the stack
// registers once as `compress_layer`), or null unless options.linformer.shared_layer.
std::shared_ptr<Module> make_linformer_layer_compression(const MixerOptions& options);

}  // namespace attn::nn
