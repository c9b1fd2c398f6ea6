// The sizes and strides of one fused attention forward (cuda/kernels/attention.cuh), and the
// block layout it is launched with: a plain struct passed by value to the kernel, free of the
// kernel dialect so host code can fill it (cuda/cuda_backend.cpp).
#pragma once
#include "core/attention_limits.hpp"
#include "cuda/kernels/host_device.hpp"

namespace attn::cuda_kernels {

// A block serves a tile of 4 to 16 queries of one (batch, head), one warp each (warps past
// the last query only help stage keys and values).
constexpr int kAttentionMinTileQueries = 4, kAttentionMaxTileQueries = 16;
// Keys (and values) are staged in shared memory this many rows at a time: one per lane.
constexpr int kAttentionKeyTile = 32;
// The shared memory every launch may take without opting in to more, on every architecture
// built (sm_80, sm_90).
constexpr long long kAttentionSharedBytesLimit = 48 * 1024;

// Element strides of a [B, H, T, width] operand.
struct AttentionStrides {
  long long batch, head, position, column;

  ATTN_HD long long at(int b, int h, int t, int c) const {
    return b * batch + h * head + t * position + c * column;
  }
};

struct AttentionShape {
  int batch, heads, queries, keys, width, value_width;  // B, H, Tq, Tk, d, dv
  AttentionStrides q, k, v, out;
  float scale;
  bool causal;
  int tile_queries;  // queries per block (fitting_tile_queries)

  ATTN_HD int query_tiles() const { return (queries + tile_queries - 1) / tile_queries; }
  ATTN_HD long long blocks() const { return (long long)batch * heads * query_tiles(); }
  ATTN_HD int threads() const { return 32 * tile_queries; }
  // A row of the staged key or value tile, one float wider than the widest operand row so
  // that lanes reading different rows of one column hit different shared-memory banks.
  ATTN_HD int tile_row() const { return (width > value_width ? width : value_width) + 1; }
  // Shared memory: the block's queries [tile][d], the key/value tile [32][tile_row] and the
  // queries' scores, then probabilities, against every key [tile][Tk].
  ATTN_HD long long shared_floats() const {
    return (long long)tile_queries * width + (long long)kAttentionKeyTile * tile_row() +
           (long long)tile_queries * keys;
  }
  // Whether query i sees key j: not padded and, causal, not after i + Tk − Tq.
  ATTN_HD bool causally_visible(int query, int key) const { return !causal || key <= query + keys - queries; }
};

// The queries per block for `shape` (its tile_queries ignored): the queries of a tile share
// every key and value the block stages, so a bigger tile reads K and V fewer times — up to
// kAttentionMaxTileQueries, no more than Tq needs, and halved until the block's shared memory
// fits the limit. At least kAttentionMinTileQueries: a decoding step (Tq = 1) has one query,
// and a lone warp would stage every key and value by itself (tiles of one query made a base
// model's greedy decoding of 1,024 tokens 3× slower on an H200).
ATTN_HD inline int fitting_tile_queries(AttentionShape shape) {
  shape.tile_queries = kAttentionMinTileQueries;
  while (shape.tile_queries < kAttentionMaxTileQueries && shape.tile_queries < shape.queries) shape.tile_queries *= 2;
  while (shape.tile_queries > 1 && shape.shared_floats() * 4 > kAttentionSharedBytesLimit) shape.tile_queries /= 2;
  return shape.tile_queries;
}

// Even the largest attention of kFusedAttentionMax* sizes gets the smallest tile.
static_assert(4 * (kAttentionMinTileQueries * kFusedAttentionMaxHeadWidth +
                   kAttentionKeyTile * (kFusedAttentionMaxHeadWidth + 1) +
                   kAttentionMinTileQueries * kFusedAttentionMaxKeys) <= kAttentionSharedBytesLimit,
              "the fused attention's largest block exceeds the shared memory limit");

}  // namespace attn::cuda_kernels
