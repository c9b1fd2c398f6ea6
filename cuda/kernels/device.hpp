// The dialect of the kernel bodies under cuda/kernels/: plain CUDA C++ that nvcc compiles
// for the GPU (through the thin launch files cuda/*.cu) and the host compiler compiles for
// the emulator (cuda/emulator/emulator.hpp, used by the tests). Kernel bodies include this
// header and core/kernel_params.hpp only: no fmt, no standard-library types, and shared
// memory only through shared_memory<T>() (the launch's dynamic shared memory).
#pragma once
#include <cstdint>  // fixed-width integers (int64_t indices, as the CPU side stores them)

#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
#include <cmath>

#include "cuda/emulator/emulator.hpp"
#endif

namespace attn::cuda_kernels {

constexpr unsigned kFullWarp = 0xffffffffu;
constexpr unsigned kWarpSize = 32;

// The block's dynamic shared memory, as T.
template <typename T>
__device__ inline T* shared_memory() {
#ifdef __CUDACC__
  extern __shared__ __align__(16) unsigned char attn_shared_bytes[];
  return reinterpret_cast<T*>(attn_shared_bytes);
#else
  return static_cast<T*>(::attn::cuda_emulator::shared_memory_base());
#endif
}

}  // namespace attn::cuda_kernels
