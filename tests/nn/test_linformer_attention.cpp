// Linformer attention (nn/mixers/linformer_attention.hpp, docs/models.md §4): fairseq names
// and the sharing modes (layerwise E saved once by the encoder), the forward against a plain
// float64 loop with left padding, a sentence alone equal to inside any batch, float64
// gradchecks, cross-attention decoding steps equal to the forward, the implied attention map,
// frozen compression, and the errors (causal use, too long a sentence).
#include <catch.hpp>

#include <cmath>

#include "../autograd/grad_test_util.hpp"
#include "float64_params.hpp"
#include "nn/mixers/mixer_registry.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;
using attn::test::check_close;
using Catch::Matchers::Contains;

namespace {

nn::MixerOptions linformer_options(int64_t dim, int64_t heads, int64_t k, int64_t max_len, bool cross) {
  nn::MixerOptions o;
  o.kind = "linformer";
  o.embed_dim = dim;
  o.num_heads = heads;
  o.cross_attention = cross;
  o.linformer.k = k;
  o.linformer.max_seq_len = max_len;
  return o;
}

std::shared_ptr<nn::LinformerAttention> linformer(const nn::MixerOptions& o) {
  manual_seed(5);
  auto m = std::dynamic_pointer_cast<nn::LinformerAttention>(nn::create_mixer(o));
  REQUIRE(m != nullptr);
  m->eval();
  return m;
}

Tensor pad_mask(const std::vector<std::vector<int>>& rows) {
  std::vector<int64_t> flags;
  for (const auto& row : rows)
    for (int p : row) flags.push_back(p);
  return ops::ne(from_vector(flags, {int64_t(rows.size()), int64_t(rows[0].size())}), 0.0);
}

std::vector<double> values_of(const Tensor& t) { return t.to(DType::Float64).to_vector(); }

// y = W_o concat_h(softmax(q_h K̄_hᵀ/√d) V̄_h) + b_o with K̄ = Σ_{real t} E[:, pos(t)] K[t], in double.
std::vector<double> reference(nn::LinformerAttention& a, const Tensor& x, const Tensor& m,
                              const std::vector<std::vector<int>>& pads, int64_t heads) {
  const int64_t B = x.size(0), N = x.size(1), M = m.size(1), D = x.size(2), d = D / heads;
  auto project = [&](const nn::Linear& l, const Tensor& in) {
    return values_of(ops::add(ops::matmul(in, l.weight.transpose(0, 1)), l.bias));
  };
  const std::vector<double> q = project(*a.q_proj, x), keys = project(*a.k_proj, m), vals = project(*a.v_proj, m);
  const std::vector<double> e = values_of(a.compress_k->weight);
  const std::vector<double> f = values_of(a.compress_v ? a.compress_v->weight : a.compress_k->weight);
  const int64_t k = a.compress_k->weight.size(0), n_max = a.compress_k->weight.size(1);
  std::vector<double> merged(size_t(B * N * D));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> kbar(size_t(k * D)), vbar(size_t(k * D));
    int64_t pos = 0;
    for (int64_t t = 0; t < M; ++t) {
      if (!pads.empty() && pads[size_t(b)][size_t(t)]) continue;
      for (int64_t i = 0; i < k; ++i)
        for (int64_t c = 0; c < D; ++c) {
          kbar[size_t(i * D + c)] += e[size_t(i * n_max + pos)] * keys[size_t((b * M + t) * D + c)];
          vbar[size_t(i * D + c)] += f[size_t(i * n_max + pos)] * vals[size_t((b * M + t) * D + c)];
        }
      ++pos;
    }
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t n = 0; n < N; ++n) {
        std::vector<double> s(static_cast<size_t>(k));
        double max = -1e300, sum = 0;
        for (int64_t i = 0; i < k; ++i) {
          for (int64_t c = 0; c < d; ++c) s[size_t(i)] += q[size_t((b * N + n) * D + h * d + c)] * kbar[size_t(i * D + h * d + c)];
          s[size_t(i)] /= std::sqrt(double(d));
          max = std::max(max, s[size_t(i)]);
        }
        for (double& v : s) sum += (v = std::exp(v - max));
        for (int64_t c = 0; c < d; ++c) {
          double o = 0;
          for (int64_t i = 0; i < k; ++i) o += s[size_t(i)] / sum * vbar[size_t(i * D + h * d + c)];
          merged[size_t((b * N + n) * D + h * d + c)] = o;
        }
      }
  }
  const std::vector<double> wo = values_of(a.out_proj->weight), bo = values_of(a.out_proj->bias);
  std::vector<double> y(merged.size());
  for (int64_t r = 0; r < B * N; ++r)
    for (int64_t o = 0; o < D; ++o) {
      double v = bo[size_t(o)];
      for (int64_t c = 0; c < D; ++c) v += wo[size_t(o * D + c)] * merged[size_t(r * D + c)];
      y[size_t(r * D + o)] = v;
    }
  return y;
}

}  // namespace

TEST_CASE("linformer: fairseq names, sharing modes, init and freezing") {
  auto names = [](const nn::Module& m) {
    std::vector<std::string> out;
    for (const auto& [name, t] : m.state_dict()) out.push_back(name);
    return out;
  };
  auto none = linformer(linformer_options(8, 2, 4, 16, false));
  CHECK(names(*none) == std::vector<std::string>{"q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                                 "v_proj.weight", "v_proj.bias", "out_proj.weight", "out_proj.bias",
                                                 "compress_k.weight", "compress_v.weight"});
  CHECK(none->compress_k->weight.shape() == Shape{4, 16});
  CHECK(ops::amax(ops::abs(none->compress_k->weight)).item() <= 1.0 / std::sqrt(16.0));  // U(±1/√n_max)
  nn::MixerOptions kv = linformer_options(8, 2, 4, 16, false);
  kv.linformer.shared_kv = true;
  CHECK(linformer(kv)->compress_v == nullptr);
  nn::MixerOptions frozen = linformer_options(8, 2, 4, 16, false);
  frozen.linformer.freeze = true;
  CHECK_FALSE(requires_grad(linformer(frozen)->compress_k->weight));

  // Layerwise: one E, saved once by the encoder as compress_layer, used by every layer.
  nn::TransformerConfig c = nn::transformer_preset("linformer_tiny");
  c.src_vocab_size = c.tgt_vocab_size = 20;
  c.encoder_embed_dim = c.decoder_embed_dim = 8;
  c.encoder_attention_heads = c.decoder_attention_heads = 2;
  c.max_source_positions = c.max_target_positions = 16;
  c.linformer_k = 4;
  c.shared_layer_kv_compressed = true;
  const nn::EncoderDecoderModel model(c);
  int64_t compress_entries = 0;
  for (const std::string& name : names(model))
    if (name.find("compress") != std::string::npos) {
      ++compress_entries;
      CHECK((name == "encoder.compress_layer.weight" || name == "decoder.compress_layer.weight"));
    }
  CHECK(compress_entries == 2);  // the encoder's (self) and the decoder's (cross), once each
}

TEST_CASE("linformer forward equals the float64 loop (self and cross, left padding)") {
  for (bool cross : {false, true}) {
    auto a = linformer(linformer_options(8, 2, 3, 10, cross));
    const Tensor x = normal({2, cross ? 3 : 5, 8}, 0, 1, DType::Float32), m = normal({2, 5, 8}, 0, 1, DType::Float32);
    const std::vector<std::vector<int>> pads = {{1, 1, 0, 0, 0}, {0, 0, 0, 0, 0}};
    nn::MixerContext ctx;
    ctx.key_padding_mask = pad_mask(pads);
    if (cross) ctx.memory = m;
    const std::vector<double> got = values_of(a->forward(x, ctx));
    const std::vector<double> expected = reference(*a, x, cross ? m : x, pads, 2);
    INFO((cross ? "cross" : "self"));
    check_close(got, expected, 1e-5);
  }
}

TEST_CASE("linformer: a sentence's output alone equals its output in a left-padded batch") {
  auto a = linformer(linformer_options(8, 2, 3, 12, false));
  const Tensor sentence = normal({1, 4, 8}, 0, 1, DType::Float32), other = normal({1, 7, 8}, 0, 1, DType::Float32);
  const Tensor alone = a->forward(sentence, nn::MixerContext{});
  Tensor padded = zeros({1, 7, 8});
  padded.narrow(1, 3, 4).copy_(sentence);
  nn::MixerContext ctx;
  ctx.key_padding_mask = pad_mask({{1, 1, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0}});
  const Tensor batched = a->forward(ops::cat({padded, other}, 0), ctx);
  check_close(batched.narrow(0, 0, 1).narrow(1, 3, 4), alone, 1e-5);
}

TEST_CASE("linformer gradcheck in float64 (input, memory and every parameter)") {
  for (bool shared_kv : {false, true}) {
    nn::MixerOptions o = linformer_options(4, 2, 2, 6, true);
    o.linformer.shared_kv = shared_kv;
    auto a = linformer(o);
    a->train();  // dropout 0: training mode changes nothing but is the mode gradients are taken in
    Leaves inputs = {leaf({2, 2, 4}, 51), leaf({2, 3, 4}, 52)};
    append(inputs, to_float64(*a));
    const Tensor pads = pad_mask({{1, 0, 0}, {0, 0, 0}});
    auto f = [&](const std::vector<Tensor>& in) {
      nn::MixerContext ctx;
      ctx.memory = in[1];
      ctx.key_padding_mask = pads;
      return a->forward(in[0], ctx);
    };
    GradcheckResult r = gradcheck(f, inputs);
    INFO((shared_kv ? "shared kv: " : "separate: ") << r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("linformer cross-attention steps (K̄, V̄ cached once, reorder) equal the forward") {
  auto a = linformer(linformer_options(8, 2, 3, 10, true));
  const Tensor x = normal({2, 4, 8}, 0, 1, DType::Float32), m = normal({2, 5, 8}, 0, 1, DType::Float32);
  nn::MixerContext ctx;
  ctx.memory = m;
  ctx.key_padding_mask = pad_mask({{1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}});
  const Tensor full = a->forward(x, ctx);
  NoGradGuard no_grad;
  auto state = a->init_state(2, ctx);
  for (int64_t t = 0; t < 4; ++t) check_close(a->step(x.narrow(1, t, 1), *state, ctx), full.narrow(1, t, 1), 1e-5);
  a->reorder(*state, from_vector<int64_t>({1, 1}, {2}));  // both rows now hold sentence 1's K̄, V̄
  const Tensor first = x.narrow(0, 1, 1).narrow(1, 0, 1);
  const Tensor stepped = a->step(ops::cat({first, first}, 0), *state, ctx);
  check_close(stepped.narrow(0, 0, 1), full.narrow(0, 1, 1).narrow(1, 0, 1), 1e-5);
}

TEST_CASE("linformer: the implied map P̄·E over key positions, zero at pads") {
  auto a = linformer(linformer_options(8, 2, 3, 10, false));
  const Tensor x = normal({2, 5, 8}, 0, 1, DType::Float32);
  Tensor weights;
  nn::MixerContext ctx;
  ctx.key_padding_mask = pad_mask({{1, 1, 0, 0, 0}, {0, 0, 0, 0, 0}});
  ctx.attention_weights = &weights;
  a->forward(x, ctx);
  REQUIRE(weights.shape() == Shape{2, 2, 5, 5});
  CHECK(ops::amax(ops::abs(weights.narrow(0, 0, 1).narrow(3, 0, 2))).item() == 0.0);
}

TEST_CASE("linformer refuses causal use, too long a sentence and a bad k") {
  auto a = linformer(linformer_options(8, 2, 3, 4, false));
  nn::MixerContext causal;
  causal.causal = true;
  CHECK_THROWS_WITH(a->forward(zeros({1, 3, 8}), causal), Contains("cannot be causal"));
  CHECK_THROWS_WITH(a->forward(zeros({1, 6, 8}), nn::MixerContext{}), Contains("max_seq_len = 4"));
  CHECK_THROWS_WITH(a->init_state(1, nn::MixerContext{}), Contains("only as cross-attention"));
  CHECK_THROWS_WITH(nn::create_mixer(linformer_options(8, 2, 9, 4, false)), Contains("k = 9"));
  nn::MixerOptions layerwise = linformer_options(8, 2, 3, 4, false);
  layerwise.linformer.shared_layer = true;
  CHECK_THROWS_WITH(nn::create_mixer(layerwise), Contains("compress_layer"));
}
