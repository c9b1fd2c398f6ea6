// The delta rule as one differentiable op with a fused, memory-bounded backward
// (docs/models.md §5.5; the kernels: core/cpu/delta_rule.cpp). Per row r, W_0 = 0:
//
//   u_t = β_t (v_t − W_{t−1} k_t),   W_t = W_{t−1} + u_t k_tᵀ,   y_t = W_t q_t
//
// q, k [R, T, M]; v [R, T, N]; beta [R, T] (the write strengths, in [0, 1]). Returns y [R, T, N].
// The same recurrence advances a decoding state one token at a time: ops::delta_rule.
#pragma once
#include "autograd/ops.hpp"

namespace attn {

Tensor delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta);

}  // namespace attn
