// The additive rule of gated linear attention (no gates: S_t = S_{t−1} + v_t k_tᵀ, y_t = S_t q_t;
// docs/models.md §5.2) in chunks of matrix products, the form of the "chunkwise" linear
// attention (Katharopoulos et al. 2020 §3.2 computes the same prefix sums): per row and chunk c
// of C positions, with P = tril(Q_c K_cᵀ) (the causal scores inside the chunk) and S the
// state before the chunk,
//
//   Y_c = P V_c + Q_c Sᵀ            S ← S + V_cᵀ K_c
//
// and backward, with G = ∂L/∂Y_c, R = tril(G V_cᵀ) and U = Σ over later chunks g_t q_tᵀ:
//
//   ∂Q_c = R K_c + G S     ∂K_c = Rᵀ Q_c + V_c U     ∂V_c = Pᵀ G + K_c Uᵀ     U ← U + Gᵀ Q_c
//
// Every product is a small BLAS GEMM (C = 64), several times faster than the step-by-step scan
// of gated_linear_attention.cpp, which the gated rules and decoding steps keep. Memory per
// thread: the chunk-boundary states (T/C · N·M values) and two C×C score blocks.
#pragma once
#include "core/tensor.hpp"

namespace attn::cpu {

// Whether the additive chunked form runs: no gates, and enough positions for a chunk's
// products to beat the scan.
bool use_chunked_additive(const Tensor& a, const Tensor& b, int64_t length);

// q, k [R, T, M], v [R, T, N] contiguous; state [R, N, M] holds S_0 in and S_T out; y [R, T, N].
void additive_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& state,
                               const Tensor& y);
// Gradients for S_0 = 0 (the training form), as gated_linear_attention_backward without gates.
void additive_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dy,
                                        const Tensor& dq, const Tensor& dk, const Tensor& dv);

}  // namespace attn::cpu
