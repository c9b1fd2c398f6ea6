// Fused scaled dot-product attention with its own backward (docs/models.md §1.4;
// Vaswani et al. 2017, eq. 1), one differentiable op (docs/design.md §3):
//
//   S = scale · Q Kᵀ + M          M additive: −∞ at padded keys and (causal) future keys
//   P = softmax(S)                rows whose keys are all masked give P = 0, not NaN
//   P̃ = AttnDropout(P)            inverted dropout; its keep-mask is saved
//   O = P̃ V
//
// Backward, from the saved P, P̃ and keep-mask (nothing recomputed):
//   dV = P̃ᵀ dO,  dP̃ = dO Vᵀ,  dP = keep · dP̃ / (1 − p),  dS = P ⊙ (dP − rowsum(dP ⊙ P)),
//   dQ = scale · dS K,  dK = scale · dSᵀ Q.
//
// Without dropout (evaluation, decoding, attention_dropout = 0) the forward is one kernel,
// attention_forward (core/backend_kernels.def; on CUDA cuda/kernels/attention.cuh), wherever
// the backend has it and Tk, d, dv are within its limits (core/attention_limits.hpp); otherwise,
// and always with dropout, it is composed of the kernels below. The backward is the same.
//
// Every product is one batched GEMM over (B, H) (strided views, no per-head loops), so q,
// k, v may be permuted views of [B, T, H, d] projections. Causal masking aligns the last
// query with the last key: query i of Tq sees key j iff j ≤ i + (Tk − Tq), so one decoding
// step (Tq = 1) sees every cached key.
#pragma once
#include "autograd/ops.hpp"

namespace attn {

struct AttentionOptions {
  Tensor key_padding_mask;      // Bool [B, Tk], true at padded keys; undefined for none
  bool causal = false;
  double scale = 1.0;           // applied to Q Kᵀ (the softmax mixer passes d^{-1/2})
  double dropout = 0.0;         // attention dropout probability, in [0, 1)
  bool training = false;        // dropout only when training
  Generator* generator = nullptr;  // dropout's stream; default_generator() when null
  bool return_probabilities = false;
};

struct AttentionResult {
  Tensor out;            // [B, H, Tq, dv], differentiable w.r.t. q, k, v
  Tensor probabilities;  // [B, H, Tq, Tk] before dropout, when asked for (no gradient)
};

// q [B, H, Tq, d], k [B, H, Tk, d], v [B, H, Tk, dv], same float dtype and device.
// Throws attn::Error naming the shapes on any mismatch.
AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options);

// The additive mask M, [B or 1, 1, Tq or 1, Tk] in `dtype` (−∞ where masked, 0 elsewhere),
// or undefined when nothing is masked. Exposed for the reference tests and for variants
// that mask the same way.
Tensor additive_attention_mask(const Tensor& key_padding_mask, bool causal, int64_t tq, int64_t tk, DType dtype,
                               Device device);

}  // namespace attn
