// Grid and block sizes shared by the thin launch files (cuda/*.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/kernel_launch.hpp"

namespace attn::cuda {

constexpr unsigned kThreadsPerBlock = 256;             // a multiple of the warp size
constexpr size_t kReductionScratchBytes = 32 * sizeof(float);  // block_reduce's partials
constexpr int64_t kMaxGridBlocks = 65535;              // grid-stride loops cover the rest

inline cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Enough blocks of kThreadsPerBlock for n elements, capped: grid-stride loops do the rest.
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return unsigned(blocks < kMaxGridBlocks ? blocks : kMaxGridBlocks);
}

// Checks that the launch just made was accepted.
inline void check_launch(const char* kernel) { check_cuda(int(cudaGetLastError()), kernel); }

}  // namespace attn::cuda
