// The banded convolution of LightConv and DynamicConv (core/backend_kernels.def's banded_conv
// and banded_conv_backward; docs/models.md §3.1, §3.4) over contiguous float32 tensors, in the
// cuda/kernels/device.hpp dialect. With R = C/H channels per head, h(c) = c / R, taps
// w[b,t,h,j] (shared taps: w[h,j] at every position) and u = 0 outside [0, T):
//
//   out[b,t,c]  = Σ_j w[b,t,h(c),j] · u[b, t+j−P, c]
//   du[b,s,c]   = Σ_j w[b, s−j+P, h(c), j] · dout[b, s−j+P, c]
//   dw[b,t,h,j] = Σ_{c∈h} dout[b,t,c] · u[b, t+j−P, c]            (shared taps: also Σ over b, t)
//
// How the work maps onto the GPU:
// * out and du: one thread per output element (grid-stride), each summing its K taps in tap
//   order as the CPU does. Neighbouring threads take neighbouring channels, so every read of
//   u, dout and the (broadcast) taps is coalesced.
// * per-position dw: one thread per (row, head, tap), a dot product over the head's R
//   channels — no sharing between outputs, so nothing to synchronise.
// * shared dw: a sum over every row and channel, made deterministic in two fixed stages and
//   without atomics. A block per (tap, chunk of rows) reduces its chunk's R·rows products in
//   float64 (each thread a fixed strided share, then a block_reduce tree) into partial
//   [chunks, H·K]; then one thread per tap adds its chunks' partials in chunk order. The
//   chunks give the parallelism a handful of taps alone would not.
#pragma once
#include "cuda/kernels/band_shape.hpp"
#include "cuda/kernels/block_reduce.cuh"

namespace attn::cuda_kernels {

__global__ void banded_conv_kernel(const float* u, const float* w, float* out, BandShape s) {
  const long long n = s.rows * s.channels, stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const long long r = i / s.channels;
    const int c = int(i % s.channels), t = int(r % s.length);
    const float* taps = w + s.taps(r, c / s.per_head);
    float sum = 0.0f;
    for (int j = s.first_tap(t); j < s.end_tap(t); ++j) sum += taps[j] * u[(r + j - s.padding_left) * s.channels + c];
    out[i] = sum;
  }
}

// du: input position s is read by the output rows s − j + P inside the sentence.
__global__ void banded_conv_input_grad_kernel(const float* w, const float* dout, float* du, BandShape s) {
  const long long n = s.rows * s.channels, stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const long long r = i / s.channels;
    const int c = int(i % s.channels), pos = int(r % s.length), h = c / s.per_head;
    const int first = pos + s.padding_left - (s.length - 1) > 0 ? pos + s.padding_left - (s.length - 1) : 0;
    const int end = pos + s.padding_left + 1 < s.kernel ? pos + s.padding_left + 1 : s.kernel;
    float sum = 0.0f;
    for (int j = first; j < end; ++j) {
      const long long out_row = r - j + s.padding_left;
      sum += w[s.taps(out_row, h) + j] * dout[out_row * s.channels + c];
    }
    du[i] = sum;
  }
}

// Σ_{c∈h} dout[r, c] · u[r + j − P, c] (0 when row r's tap j falls outside the sentence).
__device__ inline float tap_dot(const float* u, const float* dout, const BandShape& s, long long r, int h, int j) {
  const int t = int(r % s.length);
  if (j < s.first_tap(t) || j >= s.end_tap(t)) return 0.0f;
  const float* g = dout + r * s.channels + (long long)h * s.per_head;
  const float* in = u + (r + j - s.padding_left) * s.channels + (long long)h * s.per_head;
  float dot = 0.0f;
  for (int c = 0; c < s.per_head; ++c) dot += g[c] * in[c];
  return dot;
}

// Per-position taps: dw [rows, H, K], one thread per element.
__global__ void banded_conv_position_tap_grad_kernel(const float* u, const float* dout, float* dw, BandShape s) {
  const long long n = s.rows * s.heads * s.kernel, stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int j = int(i % s.kernel), h = int(i / s.kernel % s.heads);
    dw[i] = tap_dot(u, dout, s, i / ((long long)s.heads * s.kernel), h, j);
  }
}

// Shared taps, first stage: block (chunk = blockIdx.x, tap = blockIdx.y) writes
// partial[chunk · H·K + tap] = Σ over rows [chunk · rows_per_chunk, +rows_per_chunk) and the
// head's channels, in float64. blockDim.x a multiple of 32, 32 doubles of shared memory.
__global__ void banded_conv_shared_tap_partials_kernel(const float* u, const float* dout, double* partial,
                                                       BandShape s, int rows_per_chunk) {
  const int tap = blockIdx.y, h = tap / s.kernel, j = tap % s.kernel;
  const long long first_row = (long long)blockIdx.x * rows_per_chunk;
  const long long end_row = first_row + rows_per_chunk < s.rows ? first_row + rows_per_chunk : s.rows;
  const long long products = (end_row - first_row) * s.per_head;
  double sum = 0.0;
  for (long long e = threadIdx.x; e < products; e += blockDim.x) {
    const long long r = first_row + e / s.per_head;
    const int t = int(r % s.length), c = h * s.per_head + int(e % s.per_head);
    if (j >= s.first_tap(t) && j < s.end_tap(t))
      sum += double(dout[r * s.channels + c] * u[(r + j - s.padding_left) * s.channels + c]);
  }
  sum = block_reduce(sum, shared_memory<double>(), SumOp(), 0.0);
  if (threadIdx.x == 0) partial[(long long)blockIdx.x * s.heads * s.kernel + tap] = sum;
}

// Shared taps, second stage: dw[tap] = Σ_chunk partial[chunk, tap] in chunk order, a thread per tap.
__global__ void banded_conv_shared_tap_sum_kernel(const double* partial, float* dw, int taps, int chunks) {
  const int tap = blockIdx.x * blockDim.x + threadIdx.x;
  if (tap >= taps) return;
  double sum = 0.0;
  for (int chunk = 0; chunk < chunks; ++chunk) sum += partial[(long long)chunk * taps + tap];
  dw[tap] = float(sum);
}

}  // namespace attn::cuda_kernels
