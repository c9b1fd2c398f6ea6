// Copies between strided views of one shape (core/backend.hpp's copy when either side is not
// contiguous or the dtypes differ), in the cuda/kernels/device.hpp dialect. Within a dtype,
// elements move as raw words of their size (1, 4 or 8 bytes), so every dtype is copied bit
// for bit; between dtypes they are converted.
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

// dst[layout b] = Dst(src[layout a]): the copy between dtypes, converting as C++ does (as the
// CPU backend's copy does: floats to integers truncate, nonzero to bool is true).
template <typename Src, typename Dst>
__global__ void convert_copy_kernel(const Src* src, Dst* dst, StridedLayout layout, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    long long src_offset = 0, dst_offset = 0;
    operand_offsets(layout, i, src_offset, dst_offset);
    dst[dst_offset] = Dst(src[src_offset]);
  }
}

}  // namespace attn::cuda_kernels
