// Linformer attention (nn/mixers/linformer_attention.hpp, docs/models.md §4): fairseq names
// and parameter counts of the three sharing modes (layerwise E saved once by the stack),
// init and freezing, the forward and the implied map against a plain float64 loop with
// left padding, a sentence alone equal to inside any batch (left or right padded), float64
// gradchecks, dropout in training only, cross-attention decoding steps (and reorder) equal to
// the forward, and the errors (causal use, too long a sentence, bad k, missing shared E).
#include <catch.hpp>

#include <algorithm>
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

enum class Sharing { None, KeyValue, Layerwise };

const char* name_of(Sharing s) {
  return s == Sharing::None ? "none" : s == Sharing::KeyValue ? "key-value" : "layerwise";
}

// Options with the sharing flags set; layerwise also gets the stack's E (as the stack builds it).
nn::MixerOptions linformer_options(int64_t dim, int64_t heads, int64_t k, int64_t max_len, bool cross,
                                   Sharing sharing = Sharing::None) {
  nn::MixerOptions o;
  o.kind = "linformer";
  o.embed_dim = dim;
  o.num_heads = heads;
  o.cross_attention = cross;
  o.linformer.k = k;
  o.linformer.max_seq_len = max_len;
  o.linformer.shared_kv = sharing == Sharing::KeyValue;
  o.linformer.shared_layer = sharing == Sharing::Layerwise;
  manual_seed(7);
  o.shared = nn::make_linformer_layer_compression(o);
  return o;
}

std::shared_ptr<nn::LinformerAttention> linformer(const nn::MixerOptions& o) {
  manual_seed(5);
  auto m = std::dynamic_pointer_cast<nn::LinformerAttention>(nn::create_mixer(o));
  REQUIRE(m != nullptr);
  m->eval();
  return m;
}

// A float64 copy of a mixer (parameters promoted) and float64 inputs: tight comparisons.
std::shared_ptr<nn::LinformerAttention> linformer64(const nn::MixerOptions& o) {
  auto m = linformer(o);
  to_float64(*m);
  return m;
}

std::vector<double> values_of(const Tensor& t) { return t.to(DType::Float64).to_vector(); }

struct Reference {
  std::vector<double> output;   // [B, N, D]
  std::vector<double> weights;  // the implied map P̄ E_b, [B, H, N, M]
};

// y = W_o concat_h(softmax(q_h K̄_hᵀ/√d) V̄_h) + b_o with K̄ = Σ_{real t} E[:, pos(t)] K[t],
// V̄ likewise with F (E when shared), pos(t) counting the real tokens before t; in double loops.
Reference reference(nn::LinformerAttention& a, const Tensor& x, const Tensor& m,
                    const std::vector<std::vector<int>>& pads, int64_t heads) {
  const int64_t B = x.size(0), N = x.size(1), M = m.size(1), D = x.size(2), d = D / heads;
  auto project = [&](const nn::Linear& l, const Tensor& in) {
    return values_of(ops::add(ops::matmul(in, l.weight.transpose(0, 1)), l.bias));
  };
  const std::vector<double> q = project(*a.q_proj, x), keys = project(*a.k_proj, m), vals = project(*a.v_proj, m);
  const std::vector<double> e = values_of(a.compress_k->weight);
  const std::vector<double> f = values_of(a.compress_v ? a.compress_v->weight : a.compress_k->weight);
  const int64_t k = a.compress_k->weight.size(0), n_max = a.compress_k->weight.size(1);
  auto at = [](int64_t i) { return size_t(i); };
  std::vector<double> merged(at(B * N * D));
  Reference r{std::vector<double>(at(B * N * D)), std::vector<double>(at(B * heads * N * M))};
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> kbar(at(k * D)), vbar(at(k * D)), eb(at(k * M));  // eb: E_b [k, M]
    int64_t pos = 0;
    for (int64_t t = 0; t < M; ++t) {
      if (!pads.empty() && pads[at(b)][at(t)]) continue;
      for (int64_t i = 0; i < k; ++i) {
        eb[at(i * M + t)] = e[at(i * n_max + pos)];
        for (int64_t c = 0; c < D; ++c) {
          kbar[at(i * D + c)] += e[at(i * n_max + pos)] * keys[at((b * M + t) * D + c)];
          vbar[at(i * D + c)] += f[at(i * n_max + pos)] * vals[at((b * M + t) * D + c)];
        }
      }
      ++pos;
    }
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t n = 0; n < N; ++n) {
        std::vector<double> p(at(k));
        double max = -1e300, sum = 0;
        for (int64_t i = 0; i < k; ++i) {
          for (int64_t c = 0; c < d; ++c) p[at(i)] += q[at((b * N + n) * D + h * d + c)] * kbar[at(i * D + h * d + c)];
          p[at(i)] /= std::sqrt(double(d));
          max = std::max(max, p[at(i)]);
        }
        for (double& v : p) sum += (v = std::exp(v - max));
        for (double& v : p) v /= sum;
        for (int64_t c = 0; c < d; ++c)
          for (int64_t i = 0; i < k; ++i)
            merged[at((b * N + n) * D + h * d + c)] += p[at(i)] * vbar[at(i * D + h * d + c)];
        for (int64_t t = 0; t < M; ++t)
          for (int64_t i = 0; i < k; ++i)
            r.weights[at(((b * heads + h) * N + n) * M + t)] += p[at(i)] * eb[at(i * M + t)];
      }
  }
  const std::vector<double> wo = values_of(a.out_proj->weight), bo = values_of(a.out_proj->bias);
  for (int64_t row = 0; row < B * N; ++row)
    for (int64_t o = 0; o < D; ++o) {
      double v = bo[at(o)];
      for (int64_t c = 0; c < D; ++c) v += wo[at(o * D + c)] * merged[at(row * D + c)];
      r.output[at(row * D + o)] = v;
    }
  return r;
}

// One sentence [1, L, D] placed at the left (left padding) or right end of a [1, M, D] row,
// and that row's padding flags.
struct PaddedRow {
  Tensor values;
  std::vector<int> pads;
};
PaddedRow pad_row(const Tensor& sentence, int64_t padded_length, bool left) {
  const int64_t length = sentence.size(1), start = left ? padded_length - length : 0;
  PaddedRow row{zeros({1, padded_length, sentence.size(2)}), std::vector<int>(size_t(padded_length), 1)};
  row.values.narrow(1, start, length).copy_(sentence);
  for (int64_t t = start; t < start + length; ++t) row.pads[size_t(t)] = 0;
  return row;
}

std::vector<std::string> names(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, t] : m.state_dict()) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("linformer: fairseq names and parameter counts of the three sharing modes") {
  const int64_t D = 8, k = 4, n_max = 16, projections = 4 * (D * D + D);
  const std::vector<std::string> attention = {"q_proj.weight", "q_proj.bias",   "k_proj.weight",   "k_proj.bias",
                                              "v_proj.weight", "v_proj.bias",   "out_proj.weight", "out_proj.bias"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = attention;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  auto none = linformer(linformer_options(D, 2, k, n_max, false));
  CHECK(names(*none) == with({"compress_k.weight", "compress_v.weight"}));
  CHECK(none->compress_k->weight.shape() == Shape{k, n_max});
  CHECK(none->num_parameters() == projections + 2 * k * n_max);
  CHECK(none->kind() == "linformer");

  auto kv = linformer(linformer_options(D, 2, k, n_max, false, Sharing::KeyValue));
  CHECK(names(*kv) == with({"compress_k.weight"}));
  CHECK(kv->compress_v == nullptr);  // F = E
  CHECK(kv->num_parameters() == projections + k * n_max);

  const nn::MixerOptions layerwise = linformer_options(D, 2, k, n_max, false, Sharing::Layerwise);
  auto first = linformer(layerwise), second = linformer(layerwise);
  CHECK(names(*first) == attention);  // the stack saves E once, not each layer
  CHECK(first->num_parameters() == projections);
  CHECK(first->compress_k == layerwise.shared);  // both layers, keys and values: one E
  CHECK(second->compress_k == layerwise.shared);
  CHECK(first->compress_v == nullptr);
  CHECK(nn::make_linformer_layer_compression(linformer_options(D, 2, k, n_max, false)) == nullptr);
}

TEST_CASE("linformer: layerwise E is saved once per stack, as compress_layer") {
  nn::TransformerConfig c = nn::transformer_preset("linformer_tiny");
  c.src_vocab_size = c.tgt_vocab_size = 20;
  c.encoder_embed_dim = c.decoder_embed_dim = 8;
  c.encoder_attention_heads = c.decoder_attention_heads = 2;
  c.max_source_positions = c.max_target_positions = 16;
  c.linformer_k = 4;
  c.shared_layer_kv_compressed = true;
  const nn::EncoderDecoderModel model(c);
  std::vector<std::string> compress;
  for (const std::string& name : names(model))
    if (name.find("compress") != std::string::npos) compress.push_back(name);
  std::sort(compress.begin(), compress.end());
  // The encoder's (self-attention) and the decoder's (cross-attention), once each.
  CHECK(compress == std::vector<std::string>{"decoder.compress_layer.weight", "encoder.compress_layer.weight"});
}

TEST_CASE("linformer: PyTorch's default init unless xavier_init, and frozen compression") {
  const int64_t k = 4, n_max = 64;  // bounds 1/√64 = 0.125 against Xavier's √(6/68) ≈ 0.297
  nn::MixerOptions o = linformer_options(8, 2, k, n_max, false);
  CHECK(ops::amax(ops::abs(linformer(o)->compress_k->weight)).item() <= 1.0 / std::sqrt(double(n_max)));
  o.linformer.xavier_init = true;
  const double largest = ops::amax(ops::abs(linformer(o)->compress_k->weight)).item();
  CHECK(largest > 1.0 / std::sqrt(double(n_max)));
  CHECK(largest <= std::sqrt(6.0 / double(k + n_max)));

  for (Sharing sharing : {Sharing::None, Sharing::Layerwise}) {
    INFO(name_of(sharing));
    nn::MixerOptions frozen = linformer_options(8, 2, k, n_max, false, sharing);
    frozen.linformer.freeze = true;
    frozen.shared = nn::make_linformer_layer_compression(frozen);
    auto a = linformer(frozen);
    a->train();
    nn::MixerContext ctx;
    backward(sum(a->forward(normal({2, 5, 8}, 0, 1), ctx)));
    CHECK(grad(a->q_proj->weight).defined());
    CHECK_FALSE(requires_grad(a->compress_k->weight));
    CHECK_FALSE(grad(a->compress_k->weight).defined());
    if (a->compress_v) CHECK_FALSE(requires_grad(a->compress_v->weight));
  }
}

TEST_CASE("linformer forward and implied map equal the float64 loop (self and cross, left padding)") {
  const std::vector<std::vector<int>> pads = {{1, 1, 0, 0, 0}, {0, 0, 0, 0, 0}};
  for (Sharing sharing : {Sharing::None, Sharing::KeyValue, Sharing::Layerwise})
    for (bool cross : {false, true}) {
      INFO(name_of(sharing) << (cross ? ", cross" : ", self"));
      auto a = linformer64(linformer_options(8, 2, 3, 10, cross, sharing));
      const Tensor m = normal({2, 5, 8}, 0, 1, DType::Float64);
      const Tensor x = cross ? normal({2, 3, 8}, 0, 1, DType::Float64) : m;
      Tensor weights;
      nn::MixerContext ctx;
      ctx.key_padding_mask = pad_mask(pads);
      ctx.attention_weights = &weights;
      if (cross) ctx.memory = m;
      const std::vector<double> got = values_of(a->forward(x, ctx));
      const Reference expected = reference(*a, x, m, pads, 2);
      check_close(got, expected.output, 1e-12);
      REQUIRE(weights.shape() == Shape{2, 2, x.size(1), 5});
      check_close(values_of(weights), expected.weights, 1e-12);
    }
}

TEST_CASE("linformer: a sentence's output is the same alone and in any batch (left or right padding)") {
  for (bool cross : {false, true})
    for (bool left : {true, false}) {
      INFO((cross ? "cross, " : "self, ") << (left ? "left padding" : "right padding"));
      auto a = linformer(linformer_options(8, 2, 3, 12, cross));
      const Tensor sentence = normal({1, 4, 8}, 0, 1), mate = normal({1, 7, 8}, 0, 1);
      const Tensor queries = cross ? normal({1, 3, 8}, 0, 1) : sentence;
      Tensor alone_weights, batch_weights;
      nn::MixerContext alone_ctx;
      alone_ctx.attention_weights = &alone_weights;
      if (cross) alone_ctx.memory = sentence;
      const Tensor alone = a->forward(queries, alone_ctx);

      const PaddedRow row = pad_row(sentence, 7, left);
      const Tensor keys = ops::cat({row.values, mate}, 0);
      nn::MixerContext ctx;
      ctx.key_padding_mask = pad_mask({row.pads, std::vector<int>(7, 0)});
      ctx.attention_weights = &batch_weights;
      if (cross) ctx.memory = keys;
      const Tensor batched = a->forward(cross ? ops::cat({queries, normal({1, 3, 8}, 0, 1)}, 0) : keys, ctx);

      const int64_t start = left ? 3 : 0;
      const Tensor mine = batched.narrow(0, 0, 1);
      check_close(cross ? mine : mine.narrow(1, start, 4), alone, 1e-6);
      const Tensor my_weights = batch_weights.narrow(0, 0, 1);
      const Tensor real_weights = my_weights.narrow(3, start, 4);
      check_close(cross ? real_weights : real_weights.narrow(2, start, 4), alone_weights, 1e-6);
      CHECK(ops::amax(ops::abs(my_weights.narrow(3, left ? 0 : 4, 3))).item() == 0.0);  // pads
    }
}

TEST_CASE("linformer gradcheck in float64 (inputs and every parameter, each sharing mode)") {
  const Tensor pads = pad_mask({{1, 0, 0}, {0, 0, 0}});
  for (Sharing sharing : {Sharing::None, Sharing::KeyValue, Sharing::Layerwise})
    for (bool cross : {false, true}) {
      auto a = linformer(linformer_options(4, 2, 2, 6, cross, sharing));
      a->train();  // dropout 0: training mode changes nothing but is the mode gradients are taken in
      Leaves inputs;
      inputs.push_back(leaf({2, cross ? 2 : 3, 4}, 51));  // the queries (self: also the keys)
      if (cross) inputs.push_back(leaf({2, 3, 4}, 52));     // the memory
      append(inputs, to_float64(*a));
      auto f = [&](const std::vector<Tensor>& in) {
        nn::MixerContext ctx;
        if (cross) ctx.memory = in[1];
        ctx.key_padding_mask = pads;
        return a->forward(in[0], ctx);
      };
      GradcheckResult r = gradcheck(f, inputs);
      INFO(name_of(sharing) << (cross ? ", cross: " : ", self: ") << r.message);
      CHECK(r.ok);
    }
}

TEST_CASE("linformer: attention dropout on P̄ in training only") {
  nn::MixerOptions o = linformer_options(8, 2, 3, 10, false);
  o.attention_dropout = 0.5;
  auto a = linformer(o);
  const Tensor x = normal({2, 5, 8}, 0, 1);
  const Tensor evaluated = a->forward(x, nn::MixerContext{});
  check_close(a->forward(x, nn::MixerContext{}), evaluated, 0.0);
  a->train();
  CHECK(ops::amax(ops::abs(ops::sub(a->forward(x, nn::MixerContext{}), evaluated))).item() > 1e-3);
}

TEST_CASE("linformer cross-attention steps (K̄, V̄ cached once, reorder) equal the forward") {
  auto a = linformer(linformer_options(8, 2, 3, 10, true));
  const Tensor x = normal({2, 4, 8}, 0, 1), m = normal({2, 5, 8}, 0, 1);
  Tensor full_weights;
  nn::MixerContext ctx;
  ctx.memory = m;
  ctx.key_padding_mask = pad_mask({{1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}});
  ctx.attention_weights = &full_weights;
  const Tensor full = a->forward(x, ctx);
  NoGradGuard no_grad;
  auto state = a->init_state(2, ctx);
  for (int64_t t = 0; t < 4; ++t) {
    Tensor weights;
    nn::MixerContext step_ctx;
    step_ctx.key_padding_mask = ctx.key_padding_mask;
    step_ctx.attention_weights = &weights;
    check_close(a->step(x.narrow(1, t, 1), *state, step_ctx), full.narrow(1, t, 1), 1e-5);
    check_close(weights, full_weights.narrow(2, t, 1), 1e-6);
  }
  a->reorder(*state, from_vector<int64_t>({1, 1, 0}, {3}));  // rows: sentence 1, 1, 0
  const Tensor first_of = ops::cat({x.narrow(0, 1, 1), x.narrow(0, 1, 1), x.narrow(0, 0, 1)}, 0).narrow(1, 0, 1);
  Tensor weights;
  nn::MixerContext step_ctx;
  step_ctx.attention_weights = &weights;
  const Tensor stepped = a->step(first_of, *state, step_ctx);
  for (int64_t row = 0; row < 3; ++row) {
    const int64_t sentence = row < 2 ? 1 : 0;
    check_close(stepped.narrow(0, row, 1), full.narrow(0, sentence, 1).narrow(1, 0, 1), 1e-5);
    check_close(weights.narrow(0, row, 1), full_weights.narrow(0, sentence, 1).narrow(2, 0, 1), 1e-6);
  }
}

TEST_CASE("linformer: with F = E the implied map reproduces the output, zero at pads") {
  auto a = linformer64(linformer_options(8, 2, 3, 10, false, Sharing::KeyValue));
  const Tensor x = normal({2, 5, 8}, 0, 1, DType::Float64);
  Tensor weights;
  nn::MixerContext ctx;
  ctx.key_padding_mask = pad_mask({{1, 1, 0, 0, 0}, {0, 0, 0, 0, 0}});
  ctx.attention_weights = &weights;
  const Tensor y = a->forward(x, ctx);
  REQUIRE(weights.shape() == Shape{2, 2, 5, 5});  // [B, H, N, M]
  CHECK(ops::amax(ops::abs(weights.narrow(0, 0, 1).narrow(3, 0, 2))).item() == 0.0);
  // y = W_o concat_h(P̄_h E_b V_h) + b_o = W_o concat_h(weights_h V_h) + b_o.
  const Tensor v = permute(view(a->v_proj->forward(x), {2, 5, 2, 4}), {0, 2, 1, 3});
  const Tensor mixed = reshape(permute(matmul(weights, v), {0, 2, 1, 3}), {2, 5, 8});
  check_close(a->out_proj->forward(mixed), y, 1e-12);
}

TEST_CASE("linformer refuses causal use, too long a sentence, a bad k and a missing shared E") {
  auto a = linformer(linformer_options(8, 2, 3, 4, false));
  nn::MixerContext causal;
  causal.causal = true;
  CHECK_THROWS_WITH(a->forward(zeros({1, 3, 8}), causal),
                    Contains("cannot be used for decoder self-attention") && Contains("cannot be causal"));
  CHECK_THROWS_WITH(a->forward(zeros({1, 6, 8}), nn::MixerContext{}),
                    Contains("6 key positions are longer than --max-source-positions 4") && Contains("max_seq_len"));
  CHECK_THROWS_WITH(a->init_state(1, nn::MixerContext{}), Contains("only as cross-attention"));

  auto cross = linformer(linformer_options(8, 2, 3, 4, true));
  nn::MixerContext long_memory;
  long_memory.memory = zeros({1, 5, 8});
  CHECK_THROWS_WITH(cross->forward(zeros({1, 2, 8}), long_memory), Contains("longer than --max-source-positions 4"));
  CHECK_THROWS_WITH(cross->init_state(1, long_memory), Contains("longer than --max-source-positions 4"));
  nn::MixerContext memory;
  memory.memory = zeros({1, 3, 8});
  auto state = cross->init_state(1, memory);
  CHECK_THROWS_WITH(a->step(zeros({1, 1, 8}), *state, nn::MixerContext{}), Contains("cross-attention only"));

  CHECK_THROWS_WITH(nn::create_mixer(linformer_options(8, 2, 9, 4, false)),
                    Contains("k = 9 must be in [1, max_seq_len = 4]"));
  CHECK_THROWS_WITH(nn::create_mixer(linformer_options(8, 2, 0, 4, false)), Contains("k = 0"));
  nn::MixerOptions layerwise = linformer_options(8, 2, 3, 4, false, Sharing::Layerwise);
  layerwise.shared = nullptr;
  CHECK_THROWS_WITH(nn::create_mixer(layerwise), Contains("shared_layer") && Contains("MixerOptions::shared") &&
                                                     Contains("null"));
  layerwise.shared = nn::make_linformer_layer_compression(linformer_options(8, 2, 2, 4, false, Sharing::Layerwise));
  CHECK_THROWS_WITH(nn::create_mixer(layerwise), Contains("compress_layer is [2, 4]"));
}
