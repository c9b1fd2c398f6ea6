// Fused scaled dot-product attention (autograd/fused/scaled_dot_product.hpp): forward against a
// plain double-loop reference with padding and causal masks, fully masked rows, float64
// gradchecks (masks, permuted inputs), and attention dropout against the same computation
// composed from separate autograd ops with the same seed; without dropout, the fused
// attention_forward kernel within its size limits and the composed path beyond them.
#include <catch.hpp>

#include <cmath>
#include <limits>

#include "grad_test_util.hpp"
#include "autograd/fused/scaled_dot_product.hpp"
#include "core/ops_attention.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;
using attn::test::check_close;
using attn::AttentionOptions;
using attn::scaled_dot_product_attention;

namespace {

// Bool [B, Tk] from per-row lists of padded flags.
Tensor padding(const std::vector<std::vector<int>>& rows) {
  std::vector<int64_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return ops::ne(from_vector(flat, {int64_t(rows.size()), int64_t(rows[0].size())}), 0.0);
}

// O[b,h,i,:] = Σ_j softmax_j(scale·q_i·k_j over visible j) v_j, zero when nothing is visible.
std::vector<double> reference_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& pad,
                                        bool causal, double scale, std::vector<double>* probs_out = nullptr) {
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2), d = q.size(3), dv = v.size(3);
  std::vector<double> out(B * H * Tq * dv, 0.0);
  if (probs_out) probs_out->assign(B * H * Tq * Tk, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Tq; ++i) {
        std::vector<double> s(Tk, -INFINITY);
        double max = -INFINITY;
        for (int64_t j = 0; j < Tk; ++j) {
          bool visible = !(pad.defined() && pad.at({b, j})) && !(causal && j > i + (Tk - Tq));
          if (!visible) continue;
          s[j] = 0.0;
          for (int64_t c = 0; c < d; ++c) s[j] += q.at({b, h, i, c}) * k.at({b, h, j, c});
          s[j] *= scale;
          max = std::max(max, s[j]);
        }
        if (max == -INFINITY) continue;
        double z = 0.0;
        for (double& x : s) z += (x = std::exp(x - max));
        for (int64_t j = 0; j < Tk; ++j) {
          const double p = s[j] / z;
          if (probs_out) (*probs_out)[((b * H + h) * Tq + i) * Tk + j] = p;
          for (int64_t c = 0; c < dv; ++c) out[((b * H + h) * Tq + i) * dv + c] += p * v.at({b, h, j, c});
        }
      }
  return out;
}

}  // namespace

TEST_CASE("attention forward equals the double-loop reference with padding and causal masks") {
  // Tq = 3 < Tk = 5: the causal mask aligns the last query with the last key.
  Tensor q = leaf({2, 2, 3, 4}, 1), k = leaf({2, 2, 5, 4}, 2), v = leaf({2, 2, 5, 3}, 3);
  Tensor pad = padding({{1, 1, 0, 0, 0}, {0, 0, 0, 0, 1}});
  for (bool causal : {false, true})
    for (bool with_pad : {false, true}) {
      AttentionOptions o;
      o.key_padding_mask = with_pad ? pad : Tensor();
      o.causal = causal;
      o.scale = 0.5;
      o.return_probabilities = true;
      AttentionResult r = scaled_dot_product_attention(q, k, v, o);
      std::vector<double> probs;
      std::vector<double> expected = reference_attention(q, k, v, o.key_padding_mask, causal, 0.5, &probs);
      CHECK(r.out.shape() == Shape{2, 2, 3, 3});
      check_close(r.out.to_vector(), expected, 1e-12);
      check_close(r.probabilities.to_vector(), probs, 1e-12);
    }
}

TEST_CASE("attention over fully padded keys gives zeros, not NaN, and zero gradients") {
  Tensor q = leaf({2, 1, 2, 3}, 4), k = leaf({2, 1, 3, 3}, 5), v = leaf({2, 1, 3, 3}, 6);
  AttentionOptions o;
  o.key_padding_mask = padding({{1, 1, 1}, {0, 1, 0}});
  o.return_probabilities = true;
  AttentionResult r = scaled_dot_product_attention(q, k, v, o);
  for (double x : r.out.select(0, 0).to_vector()) CHECK(x == 0.0);
  for (double x : r.probabilities.select(0, 0).to_vector()) CHECK(x == 0.0);
  check_close(r.out.to_vector(), reference_attention(q, k, v, o.key_padding_mask, false, 1.0), 1e-12);
  backward(sum(r.out));
  for (const Tensor& t : {q, k, v})
    for (double g : grad(t).to_vector()) CHECK(std::isfinite(g));
  for (double g : grad(q).select(0, 0).to_vector()) CHECK(g == 0.0);
}

TEST_CASE("attention gradcheck in float64 with masks, on contiguous and permuted inputs") {
  Tensor pad = padding({{0, 0, 1, 1}, {1, 0, 0, 0}});
  for (bool causal : {false, true}) {
    auto f = [&](const std::vector<Tensor>& in) {
      AttentionOptions o;
      o.key_padding_mask = pad;
      o.causal = causal;
      o.scale = 0.7;
      return scaled_dot_product_attention(in[0], in[1], in[2], o).out;
    };
    check_gradients(f, {leaf({2, 2, 4, 3}, 10), leaf({2, 2, 4, 3}, 11), leaf({2, 2, 4, 2}, 12)});
    // [B, T, H, d] projections viewed as [B, H, T, d]: the heads do not fold into the batch stride.
    auto permuted = [](const Shape& s, uint64_t seed) {
      Tensor base = detach(leaf({s[0], s[2], s[1], s[3]}, seed)).permute({0, 2, 1, 3});
      set_requires_grad(base);
      return base;
    };
    check_gradients(f, {permuted({2, 2, 4, 3}, 13), permuted({2, 2, 4, 3}, 14), permuted({2, 2, 4, 2}, 15)});
  }
}

TEST_CASE("attention dropout matches softmax, dropout and matmul composed with the same seed") {
  Tensor pad = padding({{0, 0, 0, 1, 1}, {0, 0, 0, 0, 0}});
  const double p = 0.3;
  auto fused = [&](const std::vector<Tensor>& in) {
    Generator gen(42);
    AttentionOptions o;
    o.key_padding_mask = pad;
    o.causal = true;
    o.scale = 0.5;
    o.dropout = p;
    o.training = true;
    o.generator = &gen;
    return scaled_dot_product_attention(in[0], in[1], in[2], o).out;
  };
  auto composed = [&](const std::vector<Tensor>& in) {
    Generator gen(42);
    Tensor mask = additive_attention_mask(pad, true, 5, 5, in[0].dtype(), in[0].device());
    Tensor scores = matmul(in[0], transpose(in[1], -2, -1)) * 0.5 + mask;
    return matmul(dropout(softmax(scores, -1), p, true, &gen), in[2]);
  };
  std::vector<Tensor> inputs = {leaf({2, 2, 5, 3}, 20), leaf({2, 2, 5, 3}, 21), leaf({2, 2, 5, 4}, 22)};
  Tensor weights = gradcheck_weights({2, 2, 5, 4}, DType::Float64);
  std::vector<Tensor> fused_grads = weighted_gradients(fused, inputs, weights);
  std::vector<Tensor> composed_grads = weighted_gradients(composed, inputs, weights);
  check_close(fused(inputs).to_vector(), composed(inputs).to_vector(), 1e-12);
  for (size_t i = 0; i < inputs.size(); ++i) check_close(fused_grads[i].to_vector(), composed_grads[i].to_vector(), 1e-12);
  // Dropout really dropped something, and evaluation mode is deterministic without it.
  CHECK(fused(inputs).to_vector() != reference_attention(inputs[0], inputs[1], inputs[2], pad, true, 0.5));
  GradcheckResult r = gradcheck(fused, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("attention without dropout is the fused kernel within its limits and composed beyond them") {
  Tensor pad = padding({{1, 1, 1, 0, 0}, {0, 0, 0, 0, 1}});
  Tensor q = leaf({2, 2, 3, 4}, 40), k = leaf({2, 2, 5, 4}, 41), v = leaf({2, 2, 5, 3}, 42);
  CHECK(ops::fused_attention_applies(q, k, v));
  // More keys than a fused block holds (and in float32): the composed path, same results.
  const int64_t long_keys = kFusedAttentionMaxKeys + 1;
  const auto float32_leaf = [](const Shape& shape, uint64_t seed) { return detach(leaf(shape, seed)).to(DType::Float32); };
  Tensor long_q = float32_leaf({1, 1, 2, 2}, 43), long_k = float32_leaf({1, 1, long_keys, 2}, 44);
  Tensor long_v = float32_leaf({1, 1, long_keys, 3}, 45);
  CHECK_FALSE(ops::fused_attention_applies(long_q, long_k, long_v));
  Tensor long_pad = ops::ge(arange(0, double(long_keys), 1, DType::Int64).view({1, long_keys}), double(long_keys - 7));
  for (bool causal : {false, true}) {
    AttentionOptions o;
    o.key_padding_mask = pad;
    o.causal = causal;  // causal with Tq = 3, Tk = 5: sentence 0's first query sees no key
    o.scale = 0.3;
    o.dropout = 0.2;  // not applied: not training
    o.return_probabilities = true;
    AttentionResult r = scaled_dot_product_attention(q, k, v, o);
    std::vector<double> probs;
    check_close(r.out.to_vector(), reference_attention(q, k, v, pad, causal, 0.3, &probs), 1e-12);
    check_close(r.probabilities.to_vector(), probs, 1e-12);

    o.key_padding_mask = long_pad;
    AttentionResult long_r = scaled_dot_product_attention(long_q, long_k, long_v, o);
    check_close(long_r.out.to_vector(), reference_attention(long_q, long_k, long_v, long_pad, causal, 0.3, &probs),
                1e-5);
    check_close(long_r.probabilities.to_vector(), probs, 1e-5);
  }
}

TEST_CASE("attention rejects mismatched shapes, dtypes, masks and dropout rates") {
  Tensor q = leaf({1, 2, 3, 4}, 30), k = leaf({1, 2, 5, 4}, 31), v = leaf({1, 2, 5, 4}, 32);
  AttentionOptions o;
  CHECK_THROWS_AS(scaled_dot_product_attention(q, leaf({1, 2, 5, 3}, 33), v, o), Error);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, leaf({1, 2, 4, 4}, 34), o), Error);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, detach(v).to(DType::Float32), o), Error);
  CHECK_THROWS_AS(scaled_dot_product_attention(q.view({2, 3, 4}), k, v, o), Error);
  o.key_padding_mask = padding({{0, 0, 0, 1}});
  CHECK_THROWS_WITH(scaled_dot_product_attention(q, k, v, o), Catch::Contains("key_padding_mask"));
  o.key_padding_mask = Tensor();
  o.dropout = 1.0;
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, o), Error);
}
