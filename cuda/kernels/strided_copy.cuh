// Copies between strided views of one shape and dtype (core/backend.hpp's copy when either
// side is not contiguous), in the cuda/kernels/device.hpp dialect: elements move as raw
// words of their size (1, 4 or 8 bytes), so every dtype is copied bit for bit.
#pragma once
#include "cuda/kernels/strided_offsets.cuh"

namespace attn::cuda_kernels {

// dst[layout b] = src[layout a] for the n elements of the layout.
template <typename Word>
__global__ void strided_copy_kernel(const Word* src, Word* dst, StridedLayout layout, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    long long src_offset = 0, dst_offset = 0;
    operand_offsets(layout, i, src_offset, dst_offset);
    dst[dst_offset] = src[src_offset];
  }
}

}  // namespace attn::cuda_kernels
