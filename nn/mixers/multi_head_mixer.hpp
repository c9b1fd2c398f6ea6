// What every multi-head attention mixer shares (docs/models.md §1.4): the projections
// q_proj, k_proj, v_proj, out_proj under fairseq's names (W_q, W_k, W_v Xavier-uniform with
// gain 1/√2, W_o Xavier-uniform, zero biases), the split of a [B, T, D] projection into H
// heads of d = D/H channels and the merge back through out_proj, and the options of the
// fused attention op. Softmax attention and Linformer derive from it; a variant swapped in
// for softmax attention keeps these names, so a checkpoint's projections carry over.
#pragma once
#include <memory>

#include "autograd/fused/scaled_dot_product.hpp"
#include "nn/layers/linear.hpp"
#include "nn/mixers/mixer_registry.hpp"

namespace attn::nn {

class MultiHeadMixer : public TokenMixer {
 public:
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, out_proj;

 protected:
  // `name` prefixes the error when D is not a positive multiple of H.
  MultiHeadMixer(const MixerOptions& options, const char* name);

  Tensor split_heads(const Tensor& x) const;                  // [B, T, D] -> [B, H, T, d] (a view)
  Tensor merge_heads_and_project(const Tensor& heads) const;  // [B, H, T, d] -> out_proj([B, T, D])
  // Scale d^{-1/2}, the attention dropout in training, the probabilities when `weights`.
  AttentionOptions attention_options(const Tensor* weights) const;

  int64_t embed_dim_, num_heads_, head_dim_;
  double attention_dropout_;
  bool cross_attention_;
};

}  // namespace attn::nn
