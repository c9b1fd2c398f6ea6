// The raw op of the fused attention forward (core/backend_kernels.def attention_forward), for
// autograd/fused/scaled_dot_product.cpp, which checks q, k, v and picks between this kernel
// and the composed path. Its own header, beside core/ops.hpp, as only that op uses it.
#pragma once
#include "core/attention_limits.hpp"
#include "core/tensor.hpp"

namespace attn::ops {

// Whether q's backend has attention_forward and the sizes are within its limits
// (core/attention_limits.hpp).
bool fused_attention_applies(const Tensor& q, const Tensor& k, const Tensor& v);

// attention_forward into out [B, H, Tq, dv] (any layout) and probabilities [B, H, Tq, Tk]
// (contiguous), for q, k, v and key_padding_mask already checked; throws attn::Error where
// fused_attention_applies does not hold or out or probabilities do not fit.
void attention_forward_into(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask,
                            bool causal, double scale, const Tensor& out, const Tensor& probabilities);

}  // namespace attn::ops
