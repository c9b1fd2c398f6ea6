// The fused attention forward (core/backend_kernels.def attention_forward) in the
// cuda/kernels/device.hpp dialect:
//   P = softmax(scale · Q Kᵀ + M)   (a row with no visible key: P = 0),   O = P V
// with M = −∞ at padded keys and, causal, at keys after i + Tk − Tq.
//
// How the work maps onto the GPU, and why:
// * One block per (batch, head, tile of queries), one warp per query. The queries of a tile
//   share every key and value the block stages in shared memory, so K and V are read from
//   global memory once per tile rather than once per query: tiles of 4 to 16 queries, as
//   many as Tq needs and shared memory holds (fitting_tile_queries). Going from 4 to 16
//   queries per tile took a base training step's 18 attention calls from 2.19 to 1.52 ms on
//   an H200; a decoding step (Tq = 1) keeps 4 warps to stage the keys and values.
// * Scores: K is staged kAttentionKeyTile (32) rows at a time; lane j of each warp takes key
//   j of the tile and forms the dot product with its warp's query (the query row is a shared
//   memory broadcast, the key rows are one float longer than d so the 32 lanes read 32
//   different banks). The scores of the tile's queries against every key stay in shared
//   memory ([tile][Tk]), which is what bounds Tk (kFusedAttentionMaxKeys, core/attention_limits.hpp).
// * Softmax: a lane touches only the keys j ≡ lane (mod 32) it scored itself, so the row's
//   max and sum are two warp shuffle reductions, no block barrier. The probabilities
//   overwrite the scores and go to global memory, coalesced across the lanes.
// * O = P V: V is staged as K was; lane c accumulates columns c, c + 32, ... (dv ≤ 128: at
//   most kAttentionColumnsPerLane registers) over the keys in order, reading the warp's
//   probabilities as broadcasts.
// Every sum runs in a fixed order (no atomics), so results are deterministic. All threads
// reach every __syncthreads: a warp whose query lies past Tq (the last tile) still helps
// stage the tiles.
#pragma once
#include "cuda/kernels/attention_shape.hpp"
#include "cuda/kernels/block_reduce.cuh"

namespace attn::cuda_kernels {

constexpr int kAttentionColumnsPerLane = int(kFusedAttentionMaxHeadWidth / kWarpSize);

// Copies rows [first, first + 32) of the [B, H, T, width] operand x (rows past `rows`: 0)
// of (b, h) into tile [32][row_stride], all threads of the block cooperating.
__device__ inline void stage_tile(const float* x, const AttentionStrides& strides, int b, int h, int first, int rows,
                                  int width, float* tile, int row_stride) {
  for (int i = threadIdx.x; i < kAttentionKeyTile * width; i += blockDim.x) {
    const int row = i / width, column = i % width, t = first + row;
    tile[row * row_stride + column] = t < rows ? x[strides.at(b, h, t, column)] : 0.0f;
  }
}

__global__ void attention_forward_kernel(const float* q, const float* k, const float* v, const bool* padding,
                                         float* out, float* probabilities, AttentionShape s) {
  const int tile = int(blockIdx.x % unsigned(s.query_tiles()));
  const int head_row = int(blockIdx.x / unsigned(s.query_tiles()));  // b · H + h
  const int b = head_row / s.heads, h = head_row % s.heads;
  const int warp = int(threadIdx.x / kWarpSize), lane = int(threadIdx.x % kWarpSize);
  const int query = tile * s.tile_queries + warp;
  const bool active = query < s.queries;

  float* queries = shared_memory<float>();                             // [tile][d]
  float* staged = queries + s.tile_queries * s.width;                  // [32][tile_row]
  float* row = staged + kAttentionKeyTile * s.tile_row() + warp * s.keys;  // this warp's [Tk]
  const int stride = s.tile_row();

  for (int i = threadIdx.x; i < s.tile_queries * s.width; i += blockDim.x) {
    const int t = tile * s.tile_queries + i / s.width;
    queries[i] = t < s.queries ? q[s.q.at(b, h, t, i % s.width)] : 0.0f;
  }

  // Scores, and each lane's running max over the keys it scored.
  float max = -INFINITY;
  for (int first = 0; first < s.keys; first += kAttentionKeyTile) {
    __syncthreads();  // the previous tile (or, first, the queries) is complete and consumed
    stage_tile(k, s.k, b, h, first, s.keys, s.width, staged, stride);
    __syncthreads();  // the key tile is staged
    const int key = first + lane;
    if (!active || key >= s.keys) continue;
    const bool visible = !(padding && padding[(long long)b * s.keys + key]) && s.causally_visible(query, key);
    float dot = 0.0f;
    for (int c = 0; c < s.width; ++c) dot += queries[warp * s.width + c] * staged[lane * stride + c];
    row[key] = visible ? dot * s.scale : -INFINITY;
    max = fmaxf(max, row[key]);
  }

  // Softmax over the lane's own keys, reduced across the warp.
  max = warp_reduce(max, MaxOp());
  float sum = 0.0f;
  if (active)
    for (int key = lane; key < s.keys; key += kWarpSize) {
      const float e = max == -INFINITY ? 0.0f : expf(row[key] - max);
      row[key] = e;
      sum += e;
    }
  sum = warp_reduce(sum, SumOp());
  const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;  // no visible key: every e is 0
  if (active) {
    float* p_row = probabilities + ((long long)head_row * s.queries + query) * s.keys;
    for (int key = lane; key < s.keys; key += kWarpSize) {
      row[key] *= inverse;
      p_row[key] = row[key];
    }
  }

  // O = P V, lane c holding columns c, c + 32, ...
  float acc[kAttentionColumnsPerLane] = {};
  for (int first = 0; first < s.keys; first += kAttentionKeyTile) {
    __syncthreads();  // every warp's probabilities are written; the previous tile is consumed
    stage_tile(v, s.v, b, h, first, s.keys, s.value_width, staged, stride);
    __syncthreads();  // the value tile is staged
    if (!active) continue;
    const int tile_keys = s.keys - first < kAttentionKeyTile ? s.keys - first : kAttentionKeyTile;
    for (int j = 0; j < tile_keys; ++j) {
      const float p = row[first + j];
      for (int m = 0; m < kAttentionColumnsPerLane; ++m) {
        const int c = lane + m * kWarpSize;
        if (c < s.value_width) acc[m] += p * staged[j * stride + c];
      }
    }
  }
  if (!active) return;
  for (int m = 0; m < kAttentionColumnsPerLane; ++m) {
    const int c = lane + m * kWarpSize;
    if (c < s.value_width) out[s.out.at(b, h, query, c)] = acc[m];
  }
}

}  // namespace attn::cuda_kernels
