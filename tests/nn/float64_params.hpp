// Test helpers for the nn/ layer tests: float64 gradient checks replace a layer's float32
// parameter handles by float64 leaves with the same values, and return those leaves so
// gradcheck can perturb them in place (the layer reads the same storage); key-padding masks.
#pragma once
#include <catch.hpp>

#include <memory>
#include <vector>

#include "nn/layers/embedding.hpp"
#include "nn/layers/feed_forward.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/linear.hpp"
#include "nn/layers/scale_norm.hpp"
#include "nn/mixers/conv_block.hpp"
#include "nn/mixers/kernel_attention.hpp"
#include "nn/mixers/linformer_attention.hpp"
#include "nn/mixers/softmax_attention.hpp"
#include "nn/transformer/decoder_layer.hpp"
#include "nn/transformer/encoder_layer.hpp"

namespace attn::testing {

// A key-padding mask from 0/1 rows: Bool [B, T], true at padding.
inline Tensor pad_mask(const std::vector<std::vector<int>>& rows) {
  std::vector<int64_t> flags;
  for (const auto& row : rows)
    for (int p : row) flags.push_back(p);
  return ops::ne(from_vector(flags, {int64_t(rows.size()), int64_t(rows[0].size())}), 0.0);
}

using Leaves = std::vector<Tensor>;

inline void promote(Tensor& t, Leaves& leaves) {
  if (!t.defined()) return;
  t = detach(t).to(DType::Float64).clone();
  set_requires_grad(t);
  leaves.push_back(t);
}

inline void append(Leaves& to, const Leaves& from) { to.insert(to.end(), from.begin(), from.end()); }

inline Leaves to_float64(nn::Linear& m) {
  Leaves l;
  promote(m.weight, l);
  promote(m.bias, l);
  return l;
}
inline Leaves to_float64(nn::LayerNorm& m) {
  Leaves l;
  promote(m.weight, l);
  promote(m.bias, l);
  return l;
}
inline Leaves to_float64(nn::ScaleNorm& m) {
  Leaves l;
  promote(m.scale, l);
  return l;
}
inline Leaves to_float64(nn::Normalization& m) {
  if (auto* scale_norm = dynamic_cast<nn::ScaleNorm*>(&m)) return to_float64(*scale_norm);
  auto* layer_norm = dynamic_cast<nn::LayerNorm*>(&m);
  REQUIRE(layer_norm != nullptr);
  return to_float64(*layer_norm);
}
inline Leaves to_float64(nn::Embedding& m) {
  Leaves l;
  promote(m.weight, l);
  return l;
}
inline Leaves to_float64(nn::FeedForward& m) {
  Leaves l = to_float64(*m.fc1);
  append(l, to_float64(*m.fc2));
  return l;
}
// q_proj, k_proj, v_proj, out_proj: all of softmax attention.
inline Leaves to_float64(nn::MultiHeadMixer& m) {
  Leaves l;
  for (auto* p : {&m.q_proj, &m.k_proj, &m.v_proj, &m.out_proj}) append(l, to_float64(**p));
  return l;
}
inline Leaves to_float64(nn::ConvBlock& m) {
  Leaves l = to_float64(*m.linear1);
  if (m.conv->weight_linear) append(l, to_float64(*m.conv->weight_linear));
  else promote(m.conv->weight, l);
  append(l, to_float64(*m.linear2));
  return l;
}
inline Leaves to_float64(nn::LinformerAttention& m) {
  Leaves l = to_float64(static_cast<nn::MultiHeadMixer&>(m));
  for (auto* p : {&m.compress_k, &m.compress_v})
    if (*p) append(l, to_float64(**p));
  return l;
}
inline Leaves to_float64(nn::KernelAttention& m) {
  Leaves l = to_float64(static_cast<nn::MultiHeadMixer&>(m));
  if (auto projection = m.feature_map->projection()) append(l, to_float64(*projection));
  for (const auto& gate : m.rule->gates()) append(l, to_float64(*gate));
  return l;
}
inline Leaves mixer_to_float64(const std::shared_ptr<nn::TokenMixer>& mixer) {
  if (auto* kernel = dynamic_cast<nn::KernelAttention*>(mixer.get())) return to_float64(*kernel);
  if (auto* linformer = dynamic_cast<nn::LinformerAttention*>(mixer.get())) return to_float64(*linformer);
  if (auto* conv = dynamic_cast<nn::ConvBlock*>(mixer.get())) return to_float64(*conv);
  auto* softmax = dynamic_cast<nn::SoftmaxAttention*>(mixer.get());
  REQUIRE(softmax != nullptr);
  return to_float64(*softmax);
}
inline Leaves to_float64(nn::TransformerEncoderLayer& m) {
  Leaves l = mixer_to_float64(m.self_attn);
  append(l, to_float64(*m.self_attn_layer_norm));
  append(l, to_float64(m.ffn));
  append(l, to_float64(*m.final_layer_norm));
  return l;
}
inline Leaves to_float64(nn::TransformerDecoderLayer& m) {
  Leaves l = mixer_to_float64(m.self_attn);
  append(l, to_float64(*m.self_attn_layer_norm));
  append(l, mixer_to_float64(m.encoder_attn));
  append(l, to_float64(*m.encoder_attn_layer_norm));
  append(l, to_float64(m.ffn));
  append(l, to_float64(*m.final_layer_norm));
  return l;
}

}  // namespace attn::testing
