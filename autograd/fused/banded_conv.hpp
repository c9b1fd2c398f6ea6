// The banded convolution of LightConv and DynamicConv as one differentiable op with a fused
// backward (docs/models.md §3.1, §3.4; the kernels: core/cpu/banded_conv.cpp):
//
//   O[b,t,c] = Σ_j W[(b,t,) h(c), j] · U[b, t+j−P, c]       h(c) = c / (C/H), U = 0 outside [0, T)
//   ∂L/∂U[b,s,c] = Σ_j W[(b, s−j+P,) h(c), j] · G[b, s−j+P, c]
//   ∂L/∂W[b,t,h,j] = Σ_{c∈h} G[b,t,c] · U[b, t+j−P, c]        (shared taps [H, K]: also Σ over b, t)
//
// u [B, T, C]; w [H, K] (LightConv: the same taps at every position) or [B, T, H, K]
// (DynamicConv, or LightConv with DropConnect); P = padding_left: (K−1)/2 centred (encoder),
// K−1 causal (decoder).
#pragma once
#include "autograd/ops.hpp"

namespace attn {

Tensor banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left);

}  // namespace attn
