// The layout of up to three strided operands (cuda/kernels/strided_layout.hpp) from tensors:
// the output's sizes and each operand's strides, dims of extent 1 dropped. Host code, shared
// by the CUDA backend and the emulator tests.
#pragma once
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "cuda/kernels/strided_layout.hpp"

namespace attn::cuda {

// a, b and c (when defined) are views of out's shape (already expanded).
inline cuda_kernels::StridedLayout strided_layout(const Tensor& a, const Tensor& b, const Tensor& out,
                                                  const Tensor& c = Tensor()) {
  cuda_kernels::StridedLayout layout{};
  ATTN_CHECK(out.dim() <= cuda_kernels::kMaxLayoutDims,
             "the cuda backend's strided kernels take at most {} dims, got {}", cuda_kernels::kMaxLayoutDims,
             out.shape().str());
  for (int d = 0; d < out.dim(); ++d) {
    if (out.size(d) == 1) continue;
    layout.sizes[layout.dims] = out.size(d);
    layout.a_strides[layout.dims] = a.stride(d);
    layout.b_strides[layout.dims] = b.stride(d);
    layout.c_strides[layout.dims] = c.defined() ? c.stride(d) : 0;
    ++layout.dims;
  }
  return layout;
}

}  // namespace attn::cuda
