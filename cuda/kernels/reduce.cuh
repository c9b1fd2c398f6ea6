// Reductions (core/backend.hpp's reduce, arg_reduce and cumsum), in the
// cuda/kernels/device.hpp dialect. The general float32 reduction works over any dims of a
// strided input: one thread per output element walks its reduced elements in row-major
// order, accumulating in double as the CPU does (core/cpu/reduce.cpp): sum, mean, max and
// min (NaN propagates), product, L2 norm and log-sum-exp (two passes, around the maximum).
// Few outputs of many elements each (a bias gradient: 512 column sums of 4,096 rows; the
// maximum of a whole batch's token ids: one output of 4,096) would leave most of a GPU idle,
// or one thread walking thousands of elements, so every reduction but log-sum-exp is then
// split: chunks of each output's reduced elements reduced side by side, and the chunks'
// results combined in order (reduce_partial_kernel, reduce_combine_kernel). Deterministic: no
// atomics, fixed order.
#pragma once
#include "core/kernel_params.hpp"
#include "cuda/kernels/device.hpp"
#include "cuda/kernels/reduce_layout.hpp"
#include "cuda/kernels/strided_offsets.cuh"

namespace attn::cuda_kernels {

// The input offsets of reduced element j and of output i's first element (row-major over the
// reduced and the kept dims).
__device__ inline long long reduced_offset(const ReduceLayout& layout, long long j) {
  if (layout.reduced_dims == 1) return j * layout.reduced_strides[0];
  return strided_offset(j, layout.reduced_sizes, layout.reduced_strides, layout.reduced_dims);
}
__device__ inline long long kept_offset(const ReduceLayout& layout, long long i) {
  return strided_offset(i, layout.kept_sizes, layout.kept_strides, layout.kept_dims);
}

__device__ inline double reduce_step(ReduceOp op, double acc, double v, double shift) {
  switch (op) {
    case ReduceOp::Prod: return acc * v;
    case ReduceOp::Max: return (v > acc || v != v) ? v : acc;
    case ReduceOp::Min: return (v < acc || v != v) ? v : acc;
    case ReduceOp::Norm2: return acc + v * v;
    case ReduceOp::LogSumExp: return acc + exp(v - shift);
    default: return acc + v;  // Sum, Mean
  }
}

// The accumulator a reduction starts from.
__device__ inline double reduce_identity(ReduceOp op) {
  return op == ReduceOp::Prod ? 1.0 : op == ReduceOp::Max ? -INFINITY : op == ReduceOp::Min ? INFINITY : 0.0;
}

// Two chunks' accumulators as one: sums add (the L2 norm's sums of squares too), products
// multiply, extrema take the extremum (NaN still wins).
__device__ inline double combine_chunks(ReduceOp op, double acc, double chunk) {
  switch (op) {
    case ReduceOp::Prod: return acc * chunk;
    case ReduceOp::Max:
    case ReduceOp::Min: return reduce_step(op, acc, chunk, 0.0);
    default: return acc + chunk;  // Sum, Mean, Norm2
  }
}

// The result of a reduction from its accumulator: the mean divides the sum, the L2 norm takes
// the root of the sum of squares; the others are done.
__device__ inline float finished_sum(ReduceOp op, double acc, long long count) {
  if (op == ReduceOp::Mean) acc /= double(count);
  if (op == ReduceOp::Norm2) acc = sqrt(acc);
  return float(acc);
}

__global__ void reduce_kernel(ReduceOp op, const float* x, float* out, ReduceLayout layout, long long outputs) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < outputs; i += stride) {
    const long long base = kept_offset(layout, i);
    double shift = 0.0;
    if (op == ReduceOp::LogSumExp) {  // first pass: the maximum
      shift = -INFINITY;
      for (long long j = 0; j < layout.reduced_count; ++j)
        shift = reduce_step(ReduceOp::Max, shift, double(x[base + reduced_offset(layout, j)]), 0.0);
    }
    double acc = reduce_identity(op);
    for (long long j = 0; j < layout.reduced_count; ++j)
      acc = reduce_step(op, acc, double(x[base + reduced_offset(layout, j)]), shift);
    if (op == ReduceOp::LogSumExp) acc = shift + log(acc);
    out[i] = finished_sum(op, acc, layout.reduced_count);
  }
}

// Chunk c of every output's reduced elements (j from c · chunk_length, at most chunk_length of
// them) reduced in order into partial[c · outputs + i]; any op but LogSumExp. blockIdx.y is
// the chunk.
__global__ void reduce_partial_kernel(ReduceOp op, const float* x, double* partial, ReduceLayout layout,
                                      long long outputs, long long chunk_length) {
  const long long chunk = blockIdx.y, first = chunk * chunk_length;
  const long long end = first + chunk_length < layout.reduced_count ? first + chunk_length : layout.reduced_count;
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < outputs; i += stride) {
    const long long base = kept_offset(layout, i);
    double acc = reduce_identity(op);
    for (long long j = first; j < end; ++j) acc = reduce_step(op, acc, double(x[base + reduced_offset(layout, j)]), 0.0);
    partial[chunk * outputs + i] = acc;
  }
}

// out[i] from the chunks' results of reduce_partial_kernel, combined in chunk order.
__global__ void reduce_combine_kernel(ReduceOp op, const double* partial, float* out, long long outputs,
                                      long long chunks, long long reduced_count) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < outputs; i += stride) {
    double acc = reduce_identity(op);
    for (long long c = 0; c < chunks; ++c) acc = combine_chunks(op, acc, partial[c * outputs + i]);
    out[i] = finished_sum(op, acc, reduced_count);
  }
}

// Max or min along the layout's one reduced dim with its index (first index on ties, the
// first NaN wins, as on the CPU); one thread per output.
__global__ void arg_reduce_kernel(bool is_max, const float* x, float* values, int64_t* indices, ReduceLayout layout,
                                  long long outputs) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < outputs; i += stride) {
    const long long base = kept_offset(layout, i);
    float best = x[base];
    long long best_index = 0;
    for (long long j = 1; j < layout.reduced_count; ++j) {
      const float v = x[base + j * layout.reduced_strides[0]];
      const bool better = v != v ? best == best : (is_max ? v > best : v < best);
      if (better) best = v, best_index = j;
    }
    values[i] = best;
    indices[i] = best_index;
  }
}

// Running sums along one dim of a contiguous [outer, length, inner] tensor (from the end when
// reverse), one thread per line, accumulated in double as on the CPU; T is float or int64.
template <typename T>
__global__ void cumsum_kernel(const T* x, T* out, long long outer, long long length, long long inner, bool reverse) {
  const long long lines = outer * inner, stride = (long long)blockDim.x * gridDim.x;
  for (long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x; line < lines; line += stride) {
    const long long o = line / inner, j = line % inner;
    double acc = 0.0;
    for (long long step = 0; step < length; ++step) {
      const long long l = reverse ? length - 1 - step : step, at = (o * length + l) * inner + j;
      acc += double(x[at]);
      out[at] = T(acc);
    }
  }
}

}  // namespace attn::cuda_kernels
