// Kernelized and decaying attention (nn/mixers/kernel_attention.hpp, docs/models.md §5): the
// T2R code's names, each feature map against its formula, the non-causal and causal forms
// against the quadratic masked form in float64 (§5.0a), the causal form leaking nothing from
// the future, decoding steps (recurrent, O(1) state, reorder, T2R folded) equal to the
// parallel forward for every map × rule, a sentence alone equal to inside a padded batch,
// float64 gradchecks, guarded denominators on all-padding rows, and the errors.
#include <catch.hpp>

#include <algorithm>
#include <cmath>

#include "../autograd/grad_test_util.hpp"
#include "float64_params.hpp"
#include "nn/mixers/mixer_registry.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;
using attn::test::check_close;
using Catch::Matchers::Contains;

namespace {

nn::MixerOptions kernel_options(const std::string& kind, int64_t dim, int64_t heads, bool cross,
                                int64_t feature_size = 3) {
  nn::MixerOptions o;
  o.kind = kind;
  o.embed_dim = dim;
  o.num_heads = heads;
  o.cross_attention = cross;
  o.kernel.feature_size = feature_size;
  o.kernel.redraw = false;  // deterministic in training mode too (gradchecks); redraws: their own test
  return o;
}

std::shared_ptr<nn::KernelAttention> kernel_mixer(const nn::MixerOptions& o) {
  manual_seed(9);
  auto m = std::dynamic_pointer_cast<nn::KernelAttention>(nn::create_mixer(o));
  REQUIRE(m != nullptr);
  m->eval();
  return m;
}

// Every kind decoder self-attention takes, and those the non-causal places take.
const std::vector<std::string> kCausalKinds = {
    "kernel:elu+additive", "kernel:t2r+additive",   "kernel:rfa+additive", "kernel:dpfp+additive",
    "kernel:performer+additive", "kernel:elu+gated", "kernel:t2r+gated",   "kernel:performer+gated",
    "kernel:identity+decay", "kernel:elu+decay",     "kernel:dpfp+decay",   "kernel:dpfp+delta",
    "kernel:elu+delta", "kernel:performer+delta"};
const std::vector<std::string> kNonCausalKinds = {"kernel:elu+additive", "kernel:t2r+additive", "kernel:rfa+additive",
                                                  "kernel:dpfp+additive", "kernel:performer+additive"};

// The quadratic form of the additive rule (docs/models.md §5.0a) from the mixer's own φ, q, k, v:
// A = φ(Q) φ(K)ᵀ (⊙ L when causal, pads 0), Y = A V ⊘ guard(A 1), then out_proj.
Tensor quadratic_additive(nn::KernelAttention& m, const Tensor& x, const Tensor& memory, const Tensor& pads,
                          bool causal) {
  const int64_t B = x.size(0), D = x.size(2), num_heads = 2;
  const Tensor& source = memory.defined() ? memory : x;
  auto heads = [&](const Tensor& t, int64_t h) {
    return permute(view(t, {t.size(0), t.size(1), h, t.size(2) / h}), {0, 2, 1, 3});
  };
  const Tensor phi_q = m.feature_map->queries(heads(m.q_proj->forward(x), num_heads));
  Tensor phi_k = m.feature_map->keys(heads(m.k_proj->forward(source), num_heads));
  const Tensor v = heads(m.v_proj->forward(source), num_heads);
  Tensor a = matmul(phi_q, transpose(phi_k, 2, 3));  // [B, H, Tq, Tk]
  if (pads.defined()) a = masked_fill(a, unsqueeze(unsqueeze(pads, 1), 2), 0.0);
  if (causal) {
    const int64_t t = x.size(1);
    std::vector<int64_t> upper;
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < t; ++j) upper.push_back(j > i);
    a = masked_fill(a, ops::ne(from_vector(upper, {1, 1, t, t}), 0.0), 0.0);
  }
  const Tensor y = matmul(a, v) / m.feature_map->guard().apply(sum(a, {3}, true));
  return m.out_proj->forward(reshape(permute(y, {0, 2, 1, 3}), {B, x.size(1), D}));
}

// Runs a decoder self-attention step by step; returns [B, T, D].
Tensor decode_steps(nn::KernelAttention& m, const Tensor& x) {
  NoGradGuard no_grad;
  nn::MixerContext ctx;
  ctx.causal = true;
  auto state = m.init_state(x.size(0), ctx);
  std::vector<Tensor> outputs;
  for (int64_t t = 0; t < x.size(1); ++t) outputs.push_back(m.step(x.narrow(1, t, 1), *state, ctx));
  return ops::cat(outputs, 1);
}

}  // namespace

TEST_CASE("kernel attention: softmax's projection names beside the T2R code's names") {
  auto names = [](const nn::MixerOptions& o) {
    std::vector<std::string> out;
    for (const auto& [name, t] : kernel_mixer(o)->state_dict()) out.push_back(name + " " + t.shape().str());
    return out;
  };
  using V = std::vector<std::string>;
  const V projections = {"q_proj.weight [8, 8]", "q_proj.bias [8]", "k_proj.weight [8, 8]", "k_proj.bias [8]",
                         "v_proj.weight [8, 8]", "v_proj.bias [8]", "out_proj.weight [8, 8]", "out_proj.bias [8]"};
  auto with = [&](V extra) {
    V all = projections;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  CHECK(names(kernel_options("kernel:elu+additive", 8, 2, false)) == projections);
  CHECK(names(kernel_options("kernel:t2r+additive", 8, 2, false, 4)) == with({"fc3.weight [8, 4]", "fc3.bias [8]"}));
  CHECK(names(kernel_options("kernel:t2r+additive", 8, 2, true, 5)) == with({"fc4.weight [10, 4]", "fc4.bias [10]"}));
  CHECK(names(kernel_options("kernel:rfa+additive", 8, 2, true, 6)) == with({"random_feature_draws [1]", "random_matrices [2, 6, 4]"}));
  CHECK(names(kernel_options("kernel:performer+additive", 8, 2, false, 5)) == with({"random_feature_draws [1]", "random_matrices [2, 5, 4]"}));
  CHECK(names(kernel_options("kernel:elu+gated", 8, 2, false)) == with({"gate_proj.weight [2, 8]", "gate_proj.bias [2]"}));
  CHECK(names(kernel_options("kernel:dpfp+delta", 8, 2, false)) == with({"beta_proj.weight [2, 8]", "beta_proj.bias [2]"}));
  CHECK(names(kernel_options("kernel:identity+decay", 8, 2, false)) ==
        with({"gate_k_proj.weight [8, 8]", "gate_k_proj.bias [8]", "gate_v_proj.weight [8, 8]", "gate_v_proj.bias [8]"}));
  // random_matrices is a buffer: not trained
  CHECK(kernel_mixer(kernel_options("kernel:rfa+additive", 8, 2, true, 6))->num_parameters() == 4 * (64 + 8));
}

TEST_CASE("kernel attention: each feature map against its formula") {
  NoGradGuard no_grad;
  const Tensor x = from_vector<double>({0.5, -1.0, 2.0, -0.25}, {1, 1, 1, 4});
  auto features = [&](const std::string& kind, int64_t feature_size = 3) {
    auto m = kernel_mixer(kernel_options(kind, 4, 1, false, feature_size));
    to_float64(*m);
    return std::pair{m, m->feature_map->keys(x).to_vector()};
  };
  CHECK(features("kernel:elu+additive").second == std::vector<double>{1.5, std::exp(-1.0), 3.0, std::exp(-0.25)});
  CHECK(features("kernel:identity+decay").second == std::vector<double>{0.5, -1.0, 2.0, -0.25});
  {  // DPFP ν = 2: r = [.5, 0, 2, 0, 0, 1, 0, .25]; r ⊙ roll(r, 1), then r ⊙ roll(r, 2)
    const std::vector<double> r = {0.5, 0, 2, 0, 0, 1, 0, 0.25};
    std::vector<double> expected;
    for (int s : {1, 2})
      for (int i = 0; i < 8; ++i) expected.push_back(r[size_t(i)] * r[size_t((i - s + 8) % 8)]);
    CHECK(features("kernel:dpfp+additive").second == expected);
  }
  {  // T2R: ReLU(W_φ x + b_φ) for keys, ReLU(W_φ x/√d + b_φ) for queries
    auto [m, keys] = features("kernel:t2r+additive", 3);
    const std::vector<double> w = m->feature_map->projection()->weight.to_vector(),
                              b = m->feature_map->projection()->bias.to_vector(), xs = x.to_vector();
    const std::vector<double> queries = m->feature_map->queries(x).to_vector();
    for (int64_t i = 0; i < 3; ++i) {
      double key = b[size_t(i)], query = b[size_t(i)];
      for (int64_t j = 0; j < 4; ++j) {
        key += w[size_t(i * 4 + j)] * xs[size_t(j)];
        query += w[size_t(i * 4 + j)] * xs[size_t(j)] / 2.0;
      }
      CHECK(keys[size_t(i)] == Approx(std::max(key, 0.0)).margin(1e-15));
      CHECK(queries[size_t(i)] == Approx(std::max(query, 0.0)).margin(1e-15));
    }
  }
  {  // RFA: D^{-1/2} [sin(W x̂), cos(W x̂)], x̂ = x / (‖x‖ + 1e-3)
    auto m = kernel_mixer(kernel_options("kernel:rfa+additive", 4, 1, false, 3));
    const std::vector<double> phi = m->feature_map->keys(x.to(DType::Float32)).to_vector();
    const std::vector<double> w = m->state_dict().back().second.to_vector(), xs = x.to_vector();
    const double norm = std::sqrt(0.25 + 1.0 + 4.0 + 0.0625) + 1e-3;
    for (int64_t i = 0; i < 3; ++i) {
      double dot = 0;
      for (int64_t j = 0; j < 4; ++j) dot += w[size_t(i * 4 + j)] * xs[size_t(j)] / norm;
      CHECK(phi[size_t(i)] == Approx(std::sin(dot) / std::sqrt(3.0)).margin(1e-6));
      CHECK(phi[size_t(3 + i)] == Approx(std::cos(dot) / std::sqrt(3.0)).margin(1e-6));
    }
  }
  {  // Performer: m^{-1/2} exp(Ω x' − ‖x'‖²/2 − c), x' = d^{-1/4} x; one key: c = max of Ω x' − ‖x'‖²/2
    auto m = kernel_mixer(kernel_options("kernel:performer+additive", 4, 1, false, 6));
    to_float64(*m);
    const std::vector<double> phi = m->feature_map->keys(x).to_vector(), omega = m->state_dict().back().second.to_vector();
    const std::vector<double> xs = x.to_vector();
    std::vector<double> u(6);
    double squared = 0;
    for (double v : xs) squared += v * v / 2.0;  // ‖x'‖² = ‖x‖²/√d = ‖x‖²/2
    for (int64_t i = 0; i < 6; ++i) {
      for (int64_t j = 0; j < 4; ++j) u[size_t(i)] += omega[size_t(i * 4 + j)] * xs[size_t(j)] / std::sqrt(2.0);
      u[size_t(i)] -= squared / 2.0;
    }
    const double c = *std::max_element(u.begin(), u.end());
    for (int64_t i = 0; i < 6; ++i) CHECK(phi[size_t(i)] == Approx(std::exp(u[size_t(i)] - c) / std::sqrt(6.0)).margin(1e-12));
    // Ω's rows within a block of d are orthogonal
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t k = i + 1; k < 4; ++k) {
        double dot = 0;
        for (int64_t j = 0; j < 4; ++j) dot += omega[size_t(i * 4 + j)] * omega[size_t(k * 4 + j)];
        CHECK(std::abs(dot) < 1e-5);
      }
  }
}

TEST_CASE("kernel attention: the parallel forms equal the quadratic masked form in float64") {
  for (const std::string& kind : kNonCausalKinds)
    for (int form = 0; form < 3; ++form) {  // 0 encoder self (left pads), 1 cross (left pads), 2 causal self
      const bool cross = form == 1, causal = form == 2;
      auto m = kernel_mixer(kernel_options(kind, 8, 2, cross, 3));
      to_float64(*m);
      const Tensor x = uniform({2, 5, 8}, -1, 1, DType::Float64), memory = uniform({2, 4, 8}, -1, 1, DType::Float64);
      nn::MixerContext ctx;
      ctx.causal = causal;
      if (cross) ctx.memory = memory;
      if (!causal) ctx.key_padding_mask = cross ? pad_mask({{1, 1, 0, 0}, {0, 0, 0, 0}}) : pad_mask({{1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}});
      INFO(kind << " form " << form);
      // Performer's causal keys carry a running stabiliser, the reference's keys a global one: equal
      // up to the denominator's + 1e-6, which does not scale with the stabiliser.
      const double tolerance = kind == "kernel:performer+additive" && causal ? 1e-5 : 1e-12;
      check_close(m->forward(x, ctx), quadratic_additive(*m, x, cross ? memory : Tensor(), ctx.key_padding_mask, causal),
                  tolerance);
    }
}

TEST_CASE("kernel attention: the causal form leaks nothing from the future") {
  for (const std::string& kind : kCausalKinds) {
    auto m = kernel_mixer(kernel_options(kind, 8, 2, false));
    const Tensor x = normal({1, 9, 8}, 0, 1);
    Tensor changed = x.clone();
    changed.narrow(1, 5, 4).copy_(normal({1, 4, 8}, 0, 1));
    nn::MixerContext ctx;
    ctx.causal = true;
    INFO(kind);
    check_close(m->forward(x, ctx).narrow(1, 0, 5), m->forward(changed, ctx).narrow(1, 0, 5), 0.0);
  }
}

TEST_CASE("kernel attention: decoding steps with a constant-size state equal the parallel forward") {
  for (const std::string& kind : kCausalKinds) {
    auto m = kernel_mixer(kernel_options(kind, 8, 2, false));
    to_float64(*m);
    const Tensor x = normal({2, 70, 8}, 0, 1, DType::Float64);  // crosses the scan's 64-step chunk
    nn::MixerContext ctx;
    ctx.causal = true;
    INFO(kind);
    check_close(decode_steps(*m, x), m->forward(x, ctx), 1e-12);
    NoGradGuard no_grad;
    auto state = m->init_state(2, ctx);
    m->step(x.narrow(1, 0, 1), *state, ctx);
    const int64_t bytes = state->size_bytes();
    for (int64_t t = 1; t < 20; ++t) m->step(x.narrow(1, t, 1), *state, ctx);
    CHECK(state->size_bytes() == bytes);
    CHECK(bytes > 0);
  }
}

TEST_CASE("kernel attention: cross-attention decoding (S and z once, reorder) equals the forward") {
  for (const std::string& kind : kNonCausalKinds) {
    auto m = kernel_mixer(kernel_options(kind, 8, 2, true));
    const Tensor x = normal({2, 3, 8}, 0, 1), memory = normal({2, 5, 8}, 0, 1);
    nn::MixerContext ctx;
    ctx.memory = memory;
    ctx.key_padding_mask = pad_mask({{1, 1, 0, 0, 0}, {0, 0, 0, 0, 0}});
    const Tensor full = m->forward(x, ctx);
    NoGradGuard no_grad;
    auto state = m->init_state(2, ctx);
    INFO(kind);
    for (int64_t t = 0; t < 3; ++t) check_close(m->step(x.narrow(1, t, 1), *state, {}), full.narrow(1, t, 1), 1e-5);
    m->reorder(*state, from_vector<int64_t>({1, 1, 0}, {3}));
    const Tensor rows = ops::cat({x.narrow(0, 1, 1), x.narrow(0, 1, 1), x.narrow(0, 0, 1)}, 0).narrow(1, 0, 1);
    const Tensor stepped = m->step(rows, *state, {});
    check_close(stepped.narrow(0, 1, 1), full.narrow(0, 1, 1).narrow(1, 0, 1), 1e-5);
    check_close(stepped.narrow(0, 2, 1), full.narrow(0, 0, 1).narrow(1, 0, 1), 1e-5);
  }
}

TEST_CASE("kernel attention: self-attention decoding reorders its state with the beam") {
  auto m = kernel_mixer(kernel_options("kernel:t2r+gated", 8, 2, false));
  const Tensor x = normal({2, 4, 8}, 0, 1);
  nn::MixerContext ctx;
  ctx.causal = true;
  const Tensor full = m->forward(x, ctx);
  NoGradGuard no_grad;
  auto state = m->init_state(2, ctx);
  for (int64_t t = 0; t < 3; ++t) m->step(x.narrow(1, t, 1), *state, ctx);
  m->reorder(*state, from_vector<int64_t>({1, 0, 1}, {3}));
  const Tensor last = ops::cat({x.narrow(0, 1, 1), x.narrow(0, 0, 1), x.narrow(0, 1, 1)}, 0).narrow(1, 3, 1);
  const Tensor stepped = m->step(last, *state, ctx);
  check_close(stepped.narrow(0, 0, 1), full.narrow(0, 1, 1).narrow(1, 3, 1), 1e-5);
  check_close(stepped.narrow(0, 1, 1), full.narrow(0, 0, 1).narrow(1, 3, 1), 1e-5);
}

TEST_CASE("kernel attention: a sentence's output is the same alone and in a padded batch") {
  for (const std::string& kind : kNonCausalKinds) {
    for (bool cross : {false, true}) {
      auto m = kernel_mixer(kernel_options(kind, 8, 2, cross));
      const Tensor short_one = normal({1, 3, 8}, 0, 1), long_one = normal({1, 5, 8}, 0, 1);
      const Tensor padded = ops::cat({normal({1, 2, 8}, 0, 1), short_one}, 1);  // left-padded to 5
      const Tensor batch = ops::cat({padded, long_one}, 0), queries = normal({2, 2, 8}, 0, 1);
      nn::MixerContext alone, together;
      if (cross) {
        alone.memory = short_one;
        together.memory = batch;
      }
      together.key_padding_mask = pad_mask({{1, 1, 0, 0, 0}, {0, 0, 0, 0, 0}});
      const Tensor x_alone = cross ? queries.narrow(0, 0, 1) : short_one, x_batch = cross ? queries : batch;
      const Tensor in_batch = m->forward(x_batch, together).narrow(0, 0, 1);
      INFO(kind << (cross ? " cross" : " self"));
      check_close(m->forward(x_alone, alone), cross ? in_batch : in_batch.narrow(1, 2, 3), 1e-5);
    }
  }
}

TEST_CASE("kernel attention gradcheck in float64 (inputs and every parameter)") {
  struct Case {
    std::string kind;
    bool cross, causal;
  };
  for (const Case& c : {Case{"kernel:t2r+additive", false, true}, Case{"kernel:t2r+additive", true, false},
                        Case{"kernel:performer+additive", false, true}, Case{"kernel:performer+additive", false, false},
                        Case{"kernel:elu+additive", false, false}, Case{"kernel:rfa+gated", false, true},
                        Case{"kernel:identity+decay", false, true}, Case{"kernel:dpfp+decay", false, true},
                        Case{"kernel:dpfp+delta", false, true}, Case{"kernel:t2r+delta", false, true}}) {
    auto m = kernel_mixer(kernel_options(c.kind, 4, 2, c.cross, 2));
    m->train();
    Leaves inputs;
    inputs.push_back(leaf({2, 3, 4}, 71));
    if (c.cross) inputs.push_back(leaf({2, 4, 4}, 72));
    append(inputs, to_float64(*m));
    const Tensor pads = c.cross ? pad_mask({{1, 0, 0, 0}, {0, 0, 0, 0}}) : pad_mask({{1, 0, 0}, {0, 0, 0}});
    auto f = [&](const std::vector<Tensor>& in) {
      nn::MixerContext ctx;
      ctx.causal = c.causal;
      if (c.cross) ctx.memory = in[1];
      if (!c.causal) ctx.key_padding_mask = pads;
      return m->forward(in[0], ctx);
    };
    GradcheckResult r = gradcheck(f, inputs);
    INFO(c.kind << (c.cross ? " cross" : c.causal ? " causal" : " self") << ": " << r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("kernel attention: guarded denominators keep all-padding rows finite") {
  for (const std::string& kind : kNonCausalKinds) {
    auto m = kernel_mixer(kernel_options(kind, 8, 2, true));
    nn::MixerContext ctx;
    ctx.memory = normal({2, 3, 8}, 0, 1);
    ctx.key_padding_mask = pad_mask({{1, 1, 1}, {0, 0, 0}});  // sentence 0 has no key at all
    Tensor x = normal({2, 2, 8}, 0, 1);
    set_requires_grad(x);
    const Tensor y = m->forward(x, ctx);
    backward(sum(y));
    INFO(kind);
    for (double v : y.to_vector()) REQUIRE(std::isfinite(v));
    for (double v : grad(x).to_vector()) REQUIRE(std::isfinite(v));
  }
}

TEST_CASE("kernel attention refuses kinds a place cannot take, naming them") {
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:elu", 8, 2, false)),
                    Contains("must be kernel:<feature map>+<update rule>"));
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:cosine+additive", 8, 2, false)),
                    Contains("unknown feature map 'cosine'"));
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:elu+hebbian", 8, 2, false)),
                    Contains("unknown update rule 'hebbian'"));
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:identity+delta", 8, 2, false)),
                    Contains("no kernel features to normalise by"));
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:dpfp+delta", 8, 2, true)), Contains("cross-attention needs"));
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:identity+additive", 8, 2, false)),
                    Contains("no kernel features to normalise by"));
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:elu+decay", 8, 2, true)),
                    Contains("decoder self-attention only (cross-attention needs"));
  CHECK_THROWS_WITH(kernel_mixer(kernel_options("kernel:t2r+additive", 8, 2, false, 0)),
                    Contains("feature size must be positive"));
  auto decay = kernel_mixer(kernel_options("kernel:elu+gated", 8, 2, false));
  CHECK_THROWS_WITH(decay->forward(normal({1, 2, 8}, 0, 1), nn::MixerContext{}),
                    Contains("(encoder self-attention needs a non-causal rule"));
}

TEST_CASE("kernel attention: Performer's running stabiliser keeps large keys finite, causal and recurrent alike") {
  auto m = kernel_mixer(kernel_options("kernel:performer+additive", 8, 2, false, 6));
  const Tensor x = normal({1, 12, 8}, 0, 30);  // exp(Ω k') alone would overflow float32
  nn::MixerContext ctx;
  ctx.causal = true;
  const Tensor parallel = m->forward(x, ctx), stepped = decode_steps(*m, x);
  for (double v : parallel.to_vector()) REQUIRE(std::isfinite(v));
  check_close(stepped, parallel, 1e-3 * (1.0 + ops::amax(ops::abs(parallel)).item()));
}

TEST_CASE("kernel attention: RFA and Performer draw fresh features at every training forward and evaluate with the saved ones") {
  const std::string kind = GENERATE(std::string("kernel:rfa+additive"), std::string("kernel:performer+additive"));
  INFO(kind);
  nn::MixerOptions o = kernel_options(kind, 8, 2, false, 4);
  o.kernel.redraw = true;
  auto m = kernel_mixer(o);
  const Tensor x = normal({1, 5, 8}, 0, 1);
  nn::MixerContext ctx;
  ctx.causal = true;
  const Tensor evaluated = m->forward(x, ctx);
  check_close(m->forward(x, ctx), evaluated, 0.0);
  std::map<std::string, Tensor> saved;  // a copy of the state before training: random_feature_draws 0
  for (const auto& [name, t] : m->state_dict()) saved[name] = t.clone();
  m->train();
  manual_seed(3);
  const Tensor first = m->forward(x, ctx), second = m->forward(x, ctx);
  CHECK(ops::amax(ops::abs(ops::sub(first, second))).item() > 1e-3);
  CHECK(ops::amax(ops::abs(ops::sub(first, evaluated))).item() > 1e-3);
  // A draw is keyed by (seed, mixer, head, draw number), the number saved with the weights:
  // restoring it redraws the same matrices, whatever else the run drew in between.
  m->load_state_dict(saved);
  normal({100}, 0, 1);  // other random numbers (dropout) move the generator's offset
  check_close(m->forward(x, ctx), first, 0.0);
  check_close(m->forward(x, ctx), second, 0.0);
  manual_seed(4);  // another run's seed draws other matrices
  m->load_state_dict(saved);
  CHECK(ops::amax(ops::abs(ops::sub(m->forward(x, ctx), first))).item() > 1e-3);
  m->eval();
  check_close(m->forward(x, ctx), evaluated, 0.0);
}

namespace {

// The heads of a projection: [B, T, H·d] -> [B, H, T, d].
Tensor split_into_heads(const Tensor& t, int64_t heads) {
  return permute(view(t, {t.size(0), t.size(1), heads, t.size(2) / heads}), {0, 2, 1, 3});
}

// What the implied map says the mixer computes: out_proj(concat_h(A_h V_h)).
Tensor output_of_map(nn::KernelAttention& m, const Tensor& map, const Tensor& source) {
  const Tensor y = matmul(map, split_into_heads(m.v_proj->forward(source), 2));
  return m.out_proj->forward(reshape(permute(y, {0, 2, 1, 3}), {y.size(0), y.size(2), y.size(1) * y.size(3)}));
}

}  // namespace

TEST_CASE("kernel attention: the implied map gives the mixer's output (every rule but decay)") {
  for (int place = 0; place < 3; ++place) {  // 0 encoder self, 1 cross, 2 decoder self
    const bool cross = place == 1, causal = place == 2;
    for (const std::string& kind : causal ? kCausalKinds : kNonCausalKinds) {
      if (kind.find("+decay") != std::string::npos) continue;  // per-channel gates: the next test
      auto m = kernel_mixer(kernel_options(kind, 8, 2, cross));
      to_float64(*m);
      const Tensor x = uniform({2, 5, 8}, -1, 1, DType::Float64), memory = uniform({2, 4, 8}, -1, 1, DType::Float64);
      Tensor map;
      nn::MixerContext ctx;
      ctx.causal = causal;
      ctx.attention_weights = &map;
      if (cross) ctx.memory = memory;
      if (!causal) ctx.key_padding_mask = cross ? pad_mask({{1, 1, 0, 0}, {0, 0, 0, 0}}) : pad_mask({{1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}});
      INFO(kind << " place " << place);
      const Tensor out = m->forward(x, ctx);
      REQUIRE(map.shape() == Shape({2, 2, 5, cross ? 4 : 5}));
      check_close(output_of_map(*m, map, cross ? memory : x), out, 1e-12);
      const std::vector<double> a = map.to_vector();
      if (cross) CHECK((a[0] == 0.0 && a[1] == 0.0));  // sentence 0's padded keys get no weight
      if (causal) CHECK(a[1] == 0.0);  // the first query sees only itself
      if (kind == "kernel:elu+additive")  // features > 0: the normalised map's rows sum to 1
        check_close(sum(map, {3}), ones({2, 2, 5}, DType::Float64), 1e-5);
    }
  }
}

TEST_CASE("kernel attention: the decay rule's implied map is the gated products averaged over value channels") {
  auto m = kernel_mixer(kernel_options("kernel:elu+decay", 4, 2, false));
  to_float64(*m);
  const Tensor x = uniform({1, 4, 4}, -1, 1, DType::Float64);
  Tensor map;
  nn::MixerContext ctx;
  ctx.causal = true;
  ctx.attention_weights = &map;
  m->forward(x, ctx);
  const Tensor phi_q = m->feature_map->queries(split_into_heads(m->q_proj->forward(x), 2));
  const Tensor phi_k = m->feature_map->keys(split_into_heads(m->k_proj->forward(x), 2));
  const auto gates = m->rule->gates();  // gate_k_proj (b), gate_v_proj (a)
  const Tensor b = split_into_heads(sigmoid(gates[0]->forward(x)), 2), a = split_into_heads(sigmoid(gates[1]->forward(x)), 2);
  const auto at = [](const Tensor& t, int64_t h, int64_t s, int64_t i) { return select(select(select(select(t, 0, 0), 0, h), 0, s), 0, i).item(); };
  const int64_t length = 4, d_v = 2, features = phi_q.size(3);
  std::vector<double> expected;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < length; ++t)
      for (int64_t j = 0; j < length; ++j) {
        double weight = 0;  // mean_c Π_{s=j+1..t} a_s[c] · Σ_f φk_j[f] Π_{s=j+1..t} b_s[f] φq_t[f]
        for (int64_t c = 0; c < d_v && j <= t; ++c) {
          double value_gate = 1;
          for (int64_t s = j + 1; s <= t; ++s) value_gate *= at(a, h, s, c);
          double key_part = 0;
          for (int64_t f = 0; f < features; ++f) {
            double key_gate = 1;
            for (int64_t s = j + 1; s <= t; ++s) key_gate *= at(b, h, s, f);
            key_part += at(phi_k, h, j, f) * key_gate * at(phi_q, h, t, f);
          }
          weight += value_gate * key_part / double(d_v);
        }
        expected.push_back(weight);
      }
  check_close(map, from_vector(expected, {1, 2, length, length}), 1e-12);
}
