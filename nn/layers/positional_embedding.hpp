// Positions in fairseq's layout and offsets (docs/models.md §1.3).
//
// Sinusoidal: PE[r] = [sin(r ω_0) … sin(r ω_{h−1}), cos(r ω_0) … cos(r ω_{h−1})] with
// h = ⌊D/2⌋, ω_i = exp(−i ln(10000)/(h − 1)); halves concatenated, a zero column when D is
// odd, row padding_idx all zeros. A non-pad token gets row padding_idx + (number of
// non-pad tokens up to and including it); pads get row padding_idx (a zero vector), so
// left padding never shifts real tokens. Learned: the same indexing into a trained table.
#pragma once
#include "nn/module.hpp"

namespace attn::nn {

// Row indices for tokens [B, T] (int64): padding_idx + cumulative count of non-pad tokens.
Tensor make_positions(const Tensor& tokens, int64_t padding_idx);
// The sinusoidal table with `rows` rows of width dim (float32).
Tensor sinusoidal_table(int64_t rows, int64_t dim, int64_t padding_idx);

class PositionalEmbedding : public Module {
 public:
  PositionalEmbedding(int64_t max_positions, int64_t dim, int64_t padding_idx, bool learned);
  // tokens [B, T] -> [B, T, D].
  Tensor forward(const Tensor& tokens) const;
  // Incremental decoding: the embedding [B, 1, D] of a new token that is the
  // `length`-th non-pad token of its sequence (1-based).
  Tensor at_position(int64_t length, int64_t batch, Device device) const;

  bool learned;
  int64_t padding_idx;
  int64_t dim;

 private:
  // `max_position` bounds every entry of `positions` and is known on the host (from the
  // tokens' shape or the decoding step), so the lookup never reads the device back.
  Tensor lookup(const Tensor& positions, int64_t max_position) const;
  mutable Tensor table_;  // sinusoidal (grown on demand) or the learned weight
};

}  // namespace attn::nn
