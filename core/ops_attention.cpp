// The raw op of the fused attention forward (core/ops_attention.hpp).
#include "core/ops_attention.hpp"

#include "core/backend.hpp"

namespace attn::ops {

bool fused_attention_applies(const Tensor& q, const Tensor& k, const Tensor& v) {
  return backend_for(q.device()).supports(Kernel::attention_forward) && k.size(2) <= kFusedAttentionMaxKeys &&
         q.size(3) <= kFusedAttentionMaxHeadWidth && v.size(3) <= kFusedAttentionMaxHeadWidth;
}

void attention_forward_into(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask,
                            bool causal, double scale, const Tensor& out, const Tensor& probabilities) {
  ATTN_CHECK(fused_attention_applies(q, k, v),
             "attention_forward: the {} backend has no fused attention for q {}, k {}, v {} (at most {} keys and "
             "head width {})",
             backend_for(q.device()).name(), q.shape().str(), k.shape().str(), v.shape().str(),
             kFusedAttentionMaxKeys, kFusedAttentionMaxHeadWidth);
  const Shape out_shape{q.size(0), q.size(1), q.size(2), v.size(3)};
  const Shape p_shape{q.size(0), q.size(1), q.size(2), k.size(2)};
  ATTN_CHECK(out.shape() == out_shape && out.dtype() == q.dtype() && out.device() == q.device(),
             "attention_forward: out must be {} {} on {}, got {} {} on {}", dtype_name(q.dtype()), out_shape.str(),
             q.device().str(), dtype_name(out.dtype()), out.shape().str(), out.device().str());
  ATTN_CHECK(probabilities.shape() == p_shape && probabilities.dtype() == q.dtype() &&
                 probabilities.device() == q.device() && probabilities.is_contiguous(),
             "attention_forward: probabilities must be contiguous {} {} on {}, got {} {} on {}", dtype_name(q.dtype()),
             p_shape.str(), q.device().str(), dtype_name(probabilities.dtype()), probabilities.shape().str(),
             probabilities.device().str());
  const Tensor& pad = key_padding_mask;
  ATTN_CHECK(!pad.defined() || (pad.dtype() == DType::Bool && pad.shape() == Shape{k.size(0), k.size(2)} &&
                                pad.device() == q.device()),
             "attention_forward: key_padding_mask must be Bool [B={}, Tk={}] on {}, got {} {} on {}", k.size(0),
             k.size(2), q.device().str(), dtype_name(pad.dtype()), pad.shape().str(), pad.device().str());
  backend_for(q.device()).attention_forward(q, k, v, key_padding_mask, causal, scale, out, probabilities);
}

}  // namespace attn::ops
