// Where element i (in row-major order of the layout's sizes) lies in the strided operands
// of a cuda/kernels/strided_layout.hpp layout, in the cuda/kernels/device.hpp dialect.
#pragma once
#include "cuda/kernels/device.hpp"
#include "cuda/kernels/strided_layout.hpp"

namespace attn::cuda_kernels {

__device__ inline void operand_offsets(const StridedLayout& layout, long long i, long long& a_offset,
                                       long long& b_offset) {
  long long rest = i;
  a_offset = b_offset = 0;
  for (int d = layout.dims - 1; d >= 0; --d) {
    const long long index = rest % layout.sizes[d];
    rest /= layout.sizes[d];
    a_offset += index * layout.a_strides[d];
    b_offset += index * layout.b_strides[d];
  }
}

// The offset of element i (row-major over `dims` sizes) under the given strides.
__device__ inline long long strided_offset(long long i, const long long* sizes, const long long* strides, int dims) {
  long long offset = 0;
  for (int d = dims - 1; d >= 0; --d) {
    offset += (i % sizes[d]) * strides[d];
    i /= sizes[d];
  }
  return offset;
}

// The offset of element i in the third operand (c_strides).
__device__ inline long long third_operand_offset(const StridedLayout& layout, long long i) {
  return strided_offset(i, layout.sizes, layout.c_strides, layout.dims);
}

}  // namespace attn::cuda_kernels
