// The largest attention a backend's attention_forward takes (core/backend_kernels.def): a
// CUDA block keeps its queries' scores against every key, and a tile of keys or values, in
// shared memory (cuda/kernels/attention.cuh). Longer or wider attention takes the composed
// path of autograd/fused/scaled_dot_product.cpp. Plain constants, so that the kernel bodies
// (cuda/kernels/) can include them.
#pragma once

namespace attn {

inline constexpr long long kFusedAttentionMaxKeys = 1024;
inline constexpr long long kFusedAttentionMaxHeadWidth = 128;  // d and dv

}  // namespace attn
