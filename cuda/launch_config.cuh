// Grid and block sizes shared by the thin launch files (cuda/*.cu), and the one way they
// launch a kernel: launch_kernel.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/kernel_launch.hpp"
#include "cuda/kernels/device.hpp"

namespace attn::cuda {

constexpr unsigned kThreadsPerBlock = 256;             // a multiple of the warp size
constexpr size_t kReductionScratchBytes = 32 * sizeof(float);  // block_reduce's partials
constexpr int64_t kMaxGridBlocks = 65535;              // grid-stride loops cover the rest

// Enough blocks of kThreadsPerBlock for n elements, capped: grid-stride loops do the rest.
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return unsigned(blocks < kMaxGridBlocks ? blocks : kMaxGridBlocks);
}

// Checks that the launch just made was accepted.
inline void check_launch(const char* kernel) { check_cuda(int(cudaGetLastError()), kernel); }

// Launches the __global__ function `kernel` (from cuda/kernels/) over `grid` blocks of
// `block` threads with `shared_bytes` of dynamic shared memory, queued on `stream` (a
// cudaStream_t; null is the default stream), passing it `args`, and checks that the launch
// was accepted: an attn::Error naming `name` otherwise. For example
//   launch_kernel("softmax_kernel", cuda_kernels::softmax_kernel, unsigned(rows), kThreadsPerBlock,
//                 kReductionScratchBytes, stream, x, y, int(cols), log);
// Compiled by nvcc it is kernel<<<grid, block, shared_bytes, stream>>>(args...). Compiled by a
// host compiler — the backend built on the emulated runtime (cuda/emulator/runtime/) — the
// kernel body runs on the emulator (cuda/emulator/emulator.hpp) before launch_kernel returns,
// as the emulated runtime runs all of a stream's work, in cuda_emulator::backend_schedule()
// (ascending unless a test picks descending).
template <typename... Params, typename... Args>
void launch_kernel(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                   void* stream, Args... args) {
#ifdef __CUDACC__
  kernel<<<grid, block, shared_bytes, static_cast<cudaStream_t>(stream)>>>(args...);
#else
  const cuda_emulator::LaunchConfig config{.grid = {grid.x, grid.y, grid.z},
                                           .block = {block.x, block.y, block.z},
                                           .shared_bytes = shared_bytes,
                                           .schedule = cuda_emulator::backend_schedule()};
  cuda_emulator::launch(config, kernel, args...);
#endif
  check_launch(name);
}

}  // namespace attn::cuda
