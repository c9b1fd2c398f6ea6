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

// The column sums of a [rows, cols] matrix split into column_chunks(rows, cols) chunks of rows
// (a bias's or layer norm's gradient: 512 columns alone would leave most of a GPU idle): a
// thread per column and chunk writes its chunk's sums into scratch (chunks × cols floats),
// then the chunks are added in order into the result. One chunk writes the result directly.
class ColumnChunks {
 public:
  ColumnChunks(int64_t rows, int64_t cols)
      : cols_(cols), chunks_(column_chunks(rows, cols)), rows_per_chunk_(int((rows + chunks_ - 1) / chunks_)) {}

  dim3 grid() const { return dim3(unsigned((cols_ + kThreadsPerBlock - 1) / kThreadsPerBlock), unsigned(chunks_)); }
  int rows_per_chunk() const { return rows_per_chunk_; }
  int64_t scratch_floats() const { return chunks_ == 1 ? 0 : chunks_ * cols_; }
  // Where the kernel writes the chunks' sums: the result itself when there is one chunk
  // (null stays null: that result is not wanted).
  float* sums(float* result, float* scratch) const { return result == nullptr || chunks_ == 1 ? result : scratch; }
  // result = the chunks' sums in `scratch` added in order.
  void add_up(const float* scratch, float* result, void* stream) const {
    if (result != nullptr && chunks_ > 1) launch_sum_slices(scratch, result, cols_, int(chunks_), stream);
  }

 private:
  int64_t cols_, chunks_;
  int rows_per_chunk_;
};

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
