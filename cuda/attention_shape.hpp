// The shape of one fused attention forward (cuda/kernels/attention_shape.hpp) from its
// tensors: sizes, each operand's strides, scale and causality. Host code, shared by the CUDA
// backend and the emulator tests.
#pragma once
#include <climits>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "cuda/kernels/attention_shape.hpp"

namespace attn::cuda {

// q [B, H, Tq, d], k [B, H, Tk, d], v [B, H, Tk, dv] and out [B, H, Tq, dv], any strides.
inline cuda_kernels::AttentionShape attention_shape(const Tensor& q, const Tensor& k, const Tensor& v,
                                                    const Tensor& out, double scale, bool causal) {
  ATTN_CHECK(q.size(0) * q.size(1) * q.size(2) <= INT_MAX,
             "the cuda backend's attention_forward takes at most {} query rows (B·H·Tq); got q {}", INT_MAX,
             q.shape().str());
  const auto strides = [](const Tensor& t) {
    return cuda_kernels::AttentionStrides{t.stride(0), t.stride(1), t.stride(2), t.stride(3)};
  };
  cuda_kernels::AttentionShape shape{};
  shape.batch = int(q.size(0));
  shape.heads = int(q.size(1));
  shape.queries = int(q.size(2));
  shape.keys = int(k.size(2));
  shape.width = int(q.size(3));
  shape.value_width = int(v.size(3));
  shape.q = strides(q);
  shape.k = strides(k);
  shape.v = strides(v);
  shape.out = strides(out);
  shape.scale = float(scale);
  shape.causal = causal;
  shape.tile_queries = cuda_kernels::fitting_tile_queries(shape);
  return shape;
}

}  // namespace attn::cuda
