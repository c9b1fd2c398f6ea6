// Test helper: tiny Transformer configurations and random batches in fairseq's layout
// (left-padded sources ending in </s>, docs/models.md §1.1).
#pragma once
#include <vector>

#include "core/rng.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::testing {

constexpr int64_t kPad = 1, kEos = 2, kUnk = 3;

inline nn::TransformerConfig tiny_config(int64_t vocab = 12, int64_t layers = 2) {
  nn::TransformerConfig c = nn::transformer_preset("transformer_tiny");
  c.src_vocab_size = c.tgt_vocab_size = vocab;
  c.encoder_embed_dim = c.decoder_embed_dim = 16;
  c.encoder_ffn_embed_dim = c.decoder_ffn_embed_dim = 32;
  c.encoder_attention_heads = c.decoder_attention_heads = 4;
  c.encoder_layers = c.decoder_layers = layers;
  c.max_source_positions = c.max_target_positions = 64;
  return c;
}

// Sentences of real tokens (ids ≥ 4) of the given lengths, each followed by </s>.
inline std::vector<std::vector<int64_t>> random_sentences(const std::vector<int64_t>& lengths, int64_t vocab,
                                                          uint64_t seed) {
  Generator gen(seed);
  std::vector<std::vector<int64_t>> out;
  for (int64_t n : lengths) {
    std::vector<double> u = uniform({n}, 0, 1, DType::Float64, &gen).to_vector();
    std::vector<int64_t> s;
    for (double x : u) s.push_back(4 + int64_t(x * double(vocab - 4)));
    s.push_back(kEos);
    out.push_back(s);
  }
  return out;
}

// [B, max length] int64, padded on the left (sources) or the right (targets).
inline Tensor pad_batch(const std::vector<std::vector<int64_t>>& rows, bool left) {
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.size());
  std::vector<int64_t> flat;
  for (const auto& r : rows) {
    std::vector<int64_t> padded(width - r.size(), kPad);
    if (left) padded.insert(padded.end(), r.begin(), r.end());
    else padded.insert(padded.begin(), r.begin(), r.end());
    flat.insert(flat.end(), padded.begin(), padded.end());
  }
  return from_vector(flat, {int64_t(rows.size()), int64_t(width)});
}

}  // namespace attn::testing
