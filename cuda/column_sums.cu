// Launches the column sums of cuda/kernels/column_sums.cuh (cuda/kernel_launch.hpp).
#include <algorithm>

#include "cuda/kernels/column_sums.cuh"
#include "cuda/launch_config.cuh"

namespace attn::cuda {

// Enough chunks of rows for some 512 blocks, each chunk at least 64 rows.
int64_t column_sum_chunks(int64_t rows, int64_t cols) {
  constexpr int64_t kBlocksWanted = 512, kMinChunkRows = 64, kMaxChunks = 65535;
  const int64_t column_blocks = std::max<int64_t>(1, (cols + 31) / 32);
  const int64_t wanted = (kBlocksWanted + column_blocks - 1) / column_blocks;
  return std::clamp<int64_t>(std::min(wanted, rows / kMinChunkRows), 1, kMaxChunks);
}

void launch_column_sums(const float* x, float* out, double* partial, int64_t rows, int64_t cols, void* stream) {
  if (cols == 0) return;
  const int64_t chunks = column_sum_chunks(rows, cols);
  const int chunk_rows = int((rows + chunks - 1) / chunks);
  const dim3 grid(unsigned((cols + 31) / 32), unsigned(chunks));
  constexpr unsigned kThreads = 32 * cuda_kernels::kColumnSumLanes;
  launch_kernel("column_partials_kernel", cuda_kernels::column_partials_kernel, grid, kThreads,
                kThreads * sizeof(double), stream, x, partial, int(rows), int(cols), chunk_rows);
  launch_kernel("column_combine_kernel", cuda_kernels::column_combine_kernel, grid_for(cols), kThreadsPerBlock, 0,
                stream, static_cast<const double*>(partial), out, (long long)cols, int(chunks));
}

}  // namespace attn::cuda
