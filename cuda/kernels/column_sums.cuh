// Column sums of a contiguous [rows, cols] float32 matrix — a bias's gradient, the sum of a
// tensor over its leading dims — in the cuda/kernels/device.hpp dialect. A few hundred
// columns would leave most of a GPU idle with a thread per column, and a thread walking
// thousands of rows waits on one load after another; so a block takes 32 columns of a chunk
// of rows with kColumnSumLanes threads per column, each thread keeps four loads in flight,
// the lanes' sums are added in lane order, and the chunks' sums in chunk order afterwards
// (column_combine_kernel). Float64 throughout, a fixed order: deterministic, no atomics.
#pragma once
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

constexpr int kColumnSumLanes = 8;  // threads per column in a block of 32 · kColumnSumLanes

// partial[k · cols + c] = Σ x[r, c] over the rows of chunk k = blockIdx.y (chunk_rows of them
// from k · chunk_rows), for the 32 columns of block column blockIdx.x. Launch with
// 32 · kColumnSumLanes threads and as many doubles of shared memory.
__global__ void column_partials_kernel(const float* x, double* partial, int rows, int cols, int chunk_rows) {
  const int column = int(blockIdx.x) * 32 + int(threadIdx.x % 32), lane = int(threadIdx.x / 32);
  const int first = int(blockIdx.y) * chunk_rows, end = first + chunk_rows < rows ? first + chunk_rows : rows;
  double sums[4] = {0.0, 0.0, 0.0, 0.0};  // four rows apart: four loads in flight
  if (column < cols) {
    const float* at = x + column;
    int r = first + lane;
    for (; r + 3 * kColumnSumLanes < end; r += 4 * kColumnSumLanes)
      for (int k = 0; k < 4; ++k) sums[k] += double(at[(long long)(r + k * kColumnSumLanes) * cols]);
    for (; r < end; r += kColumnSumLanes) sums[0] += double(at[(long long)r * cols]);
  }
  double* lanes = shared_memory<double>();
  lanes[threadIdx.x] = (sums[0] + sums[1]) + (sums[2] + sums[3]);
  __syncthreads();  // every lane's sum is written
  if (lane == 0 && column < cols) {
    double chunk = 0.0;
    for (int l = 0; l < kColumnSumLanes; ++l) chunk += lanes[l * 32 + int(threadIdx.x)];
    partial[(long long)blockIdx.y * cols + column] = chunk;
  }
}

// out[c] = Σ_k partial[k · cols + c] in chunk order.
__global__ void column_combine_kernel(const double* partial, float* out, long long cols, int chunks) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride) {
    double sum = 0.0;
    for (int k = 0; k < chunks; ++k) sum += partial[k * cols + c];
    out[c] = float(sum);
  }
}

}  // namespace attn::cuda_kernels
