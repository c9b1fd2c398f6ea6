// Reductions of one value per thread over a warp or a whole block (cuda/kernels/device.hpp
// dialect): shuffles within each warp, then the warps' partials through shared memory.
#pragma once
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};
struct MinOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a < b ? a : b; }
};

// Every lane of the warp gets op over the 32 lanes' values (butterfly order).
template <typename T, typename Op>
__device__ inline T warp_reduce(T value, Op op) {
  for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(kFullWarp, value, int(offset)));
  return value;
}

// Every thread of the block gets op over the block's values. blockDim.x must be a multiple
// of 32; scratch holds 32 values of shared memory, free again when this returns.
template <typename T, typename Op>
__device__ inline T block_reduce(T value, T* scratch, Op op, T identity) {
  const unsigned lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize, warps = blockDim.x / kWarpSize;
  value = warp_reduce(value, op);
  if (lane == 0) scratch[warp] = value;
  __syncthreads();  // every warp's partial is written
  value = warp_reduce(lane < warps ? scratch[lane] : identity, op);
  __syncthreads();  // every thread has read scratch before a next reduction overwrites it
  return value;
}

}  // namespace attn::cuda_kernels
