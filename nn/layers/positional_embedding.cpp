#include "nn/layers/positional_embedding.hpp"

#include <cmath>

#include "nn/layers/init.hpp"

namespace attn::nn {

Tensor make_positions(const Tensor& tokens, int64_t padding_idx) {
  Tensor not_pad = ops::ne(tokens, double(padding_idx)).to(DType::Int64);
  return ops::add(ops::mul(ops::cumsum(not_pad, 1), not_pad), double(padding_idx));
}

Tensor sinusoidal_table(int64_t rows, int64_t dim, int64_t padding_idx) {
  int64_t half = dim / 2;
  Tensor table = zeros({rows, dim});
  float* t = table.data<float>();
  double step = half > 1 ? std::log(10000.0) / double(half - 1) : 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    if (r == padding_idx) continue;
    for (int64_t i = 0; i < half; ++i) {
      // fairseq evaluates in float32: ω_i in float, then r·ω_i in float.
      float omega = std::exp(float(i) * -float(step));
      float angle = float(r) * omega;
      t[r * dim + i] = std::sin(angle);
      t[r * dim + half + i] = std::cos(angle);
    }
  }
  return table;
}

PositionalEmbedding::PositionalEmbedding(int64_t max_positions, int64_t dim_, int64_t pad, bool learned_)
    : learned(learned_), padding_idx(pad), dim(dim_) {
  int64_t rows = max_positions + padding_idx + 1;
  if (learned) {
    Tensor w = init::normal({rows, dim}, 1.0 / std::sqrt(double(dim)));
    w.select(0, padding_idx).zero_();
    table_ = register_parameter("weight", w);
  } else {
    table_ = sinusoidal_table(rows, dim, padding_idx);
  }
}

Tensor PositionalEmbedding::lookup(const Tensor& positions, int64_t max_position) const {
  if (!learned) {
    // Rows do not depend on the table's length, so growing it leaves every value unchanged.
    int64_t needed = max_position + 1;
    if (needed > table_.size(0)) table_ = sinusoidal_table(needed, dim, padding_idx);  // extend on demand
    // The table is computed, not a parameter: it follows the positions to their device once.
    if (table_.device() != positions.device()) table_ = table_.to(positions.device());
    return ops::embedding(table_, positions);
  }
  // The shape's bound can overshoot when a batch longer than the table is padded; only then
  // is the exact largest position read back (a rare host sync, on an input near the limit).
  if (max_position >= table_.size(0)) {
    int64_t max_pos = int64_t(ops::amax(positions).item());
    ATTN_CHECK(max_pos < table_.size(0), "position {} is beyond the learned table of {} rows (max positions)",
               max_pos, table_.size(0));
  }
  return embedding(table_, positions, padding_idx);
}

Tensor PositionalEmbedding::forward(const Tensor& tokens) const {
  // make_positions numbers the non-pad tokens from padding_idx + 1, so T bounds them.
  return lookup(make_positions(tokens, padding_idx), padding_idx + tokens.size(1));
}

Tensor PositionalEmbedding::at_position(int64_t length, int64_t batch, Device device) const {
  return lookup(full({batch, 1}, double(padding_idx + length), DType::Int64, device), padding_idx + length);
}

}  // namespace attn::nn
