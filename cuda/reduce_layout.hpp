// The layout of a general reduction (cuda/kernels/reduce_layout.hpp) from tensors: x and out
// in keepdim form (same number of dims); a dim is reduced where out has extent 1 and x not.
// Host code, shared by the CUDA backend and the emulator tests.
#pragma once
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "cuda/kernels/reduce_layout.hpp"

namespace attn::cuda {

inline cuda_kernels::ReduceLayout reduce_layout(const Tensor& x, const Tensor& out) {
  ATTN_CHECK(x.dim() <= cuda_kernels::kMaxReduceDims, "the cuda backend's reduce takes at most {} dims, got {}",
             cuda_kernels::kMaxReduceDims, x.shape().str());
  cuda_kernels::ReduceLayout layout{};
  layout.reduced_count = 1;
  for (int d = 0; d < x.dim(); ++d) {
    if (x.size(d) == 1) continue;
    if (out.size(d) == 1) {
      layout.reduced_sizes[layout.reduced_dims] = x.size(d);
      layout.reduced_strides[layout.reduced_dims] = x.stride(d);
      ++layout.reduced_dims;
      layout.reduced_count *= x.size(d);
    } else {
      layout.kept_sizes[layout.kept_dims] = x.size(d);
      layout.kept_strides[layout.kept_dims] = x.stride(d);
      ++layout.kept_dims;
    }
  }
  return layout;
}

}  // namespace attn::cuda
