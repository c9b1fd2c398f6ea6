// Gated linear attention as one differentiable op with a fused, memory-bounded backward
// (docs/models.md §5.0, §5.6; the kernels: core/cpu/gated_linear_attention.cpp). Per row r:
//
//   S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k_tᵀ,   S_0 = 0,   y_t = S_t q_t
//
// q, k [R, T, M]; v [R, T, N]; gates a [R, T, N] and b [R, T, M] with values in [0, 1], each
// undefined for all ones (a ≡ b ≡ 1: the additive rule's causal prefix sums). Returns y
// [R, T, N]. The backward never stores B×H×T×N×M: it recomputes S chunk by chunk.
// The same recurrence advances a decoding state one token at a time: ops::gated_linear_attention.
#pragma once
#include "autograd/ops.hpp"

namespace attn {

Tensor gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a = {},
                              const Tensor& b = {});

}  // namespace attn
