// Where element i (in row-major order of the layout's sizes) lies in each of two strided
// operands (cuda/kernels/two_operand_layout.hpp), in the cuda/kernels/device.hpp dialect.
#pragma once
#include "cuda/kernels/device.hpp"
#include "cuda/kernels/two_operand_layout.hpp"

namespace attn::cuda_kernels {

__device__ inline void operand_offsets(const TwoOperandLayout& layout, long long i, long long& a_offset,
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

}  // namespace attn::cuda_kernels
