// The sizes and strides of one fused attention forward (cuda/kernels/attention.cuh), and the
// block layout it is launched with: a plain struct passed by value to the kernel, free of the
// kernel dialect so host code can fill it (cuda/cuda_backend.cpp).
#pragma once
#include "core/attention_limits.hpp"
#include "cuda/kernels/host_device.hpp"

namespace attn::cuda_kernels {

// A block serves this many queries of one (batch, head), one warp each.
constexpr int kAttentionQueriesPerBlock = 4;
constexpr int kAttentionThreads = 32 * kAttentionQueriesPerBlock;
// Keys (and values) are staged in shared memory this many rows at a time: one per lane.
constexpr int kAttentionKeyTile = 32;

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

  ATTN_HD int query_tiles() const { return (queries + kAttentionQueriesPerBlock - 1) / kAttentionQueriesPerBlock; }
  ATTN_HD long long blocks() const { return (long long)batch * heads * query_tiles(); }
  // A row of the staged key or value tile, one float wider than the widest operand row so
  // that lanes reading different rows of one column hit different shared-memory banks.
  ATTN_HD int tile_row() const { return (width > value_width ? width : value_width) + 1; }
  // Shared memory: the block's queries [4][d], the key/value tile [32][tile_row] and the
  // queries' scores, then probabilities, against every key [4][Tk].
  ATTN_HD long long shared_floats() const {
    return (long long)kAttentionQueriesPerBlock * width + (long long)kAttentionKeyTile * tile_row() +
           (long long)kAttentionQueriesPerBlock * keys;
  }
  // Whether query i sees key j: not padded and, causal, not after i + Tk − Tq.
  ATTN_HD bool causally_visible(int query, int key) const { return !causal || key <= query + keys - queries; }
};

// The largest block of kFusedAttentionMax* sizes fits in the 48 KiB of shared memory every
// launch may take without opting in to more, on every architecture built (sm_80, sm_90).
constexpr long long kAttentionMaxSharedBytes =
    4 * (kAttentionQueriesPerBlock * kFusedAttentionMaxHeadWidth +
         kAttentionKeyTile * (kFusedAttentionMaxHeadWidth + 1) + kAttentionQueriesPerBlock * kFusedAttentionMaxKeys);
static_assert(kAttentionMaxSharedBytes <= 48 * 1024, "the fused attention's largest block exceeds 48 KiB");

}  // namespace attn::cuda_kernels
