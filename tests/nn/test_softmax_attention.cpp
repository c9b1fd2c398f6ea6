// Multi-head softmax attention as a token mixer (nn/mixers/softmax_attention.hpp,
// docs/models.md §1.4) and the mixer registry: fairseq names and init, the forward against
// per-head formulas, float64 gradchecks, incremental decoding (KV cache, cross K/V once,
// reorder) against the parallel forward, and inspection.
#include <catch.hpp>

#include <cmath>

#include "../autograd/grad_test_util.hpp"
#include "float64_params.hpp"
#include "nn/mixers/mixer_registry.hpp"
#include "autograd/fused/scaled_dot_product.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;
using attn::test::check_close;

namespace {

nn::MixerOptions options(int64_t dim, int64_t heads, bool cross) {
  nn::MixerOptions o;
  o.kind = "softmax";
  o.embed_dim = dim;
  o.num_heads = heads;
  o.cross_attention = cross;
  return o;
}

Tensor padding(std::vector<int64_t> flags, int64_t batch) {
  const int64_t length = int64_t(flags.size()) / batch;
  return ops::ne(from_vector(flags, {batch, length}), 0.0);
}

// Per-head reference: y = W_o concat_h(softmax((W_q x + b_q) d^{-1/2} (W_k m + b_k)ᵀ + mask) (W_v m + b_v)) + b_o,
// with fully masked rows giving zero, computed head by head with plain ops.
Tensor reference(nn::SoftmaxAttention& a, const Tensor& x, const Tensor& m, const Tensor& pad, bool causal,
                 int64_t heads) {
  const int64_t D = x.size(2), d = D / heads;
  Tensor q = ops::mul(ops::add(ops::matmul(x, a.q_proj->weight.transpose(0, 1)), a.q_proj->bias), 1.0 / std::sqrt(double(d)));
  Tensor k = ops::add(ops::matmul(m, a.k_proj->weight.transpose(0, 1)), a.k_proj->bias);
  Tensor v = ops::add(ops::matmul(m, a.v_proj->weight.transpose(0, 1)), a.v_proj->bias);
  Tensor mask = additive_attention_mask(pad, causal, x.size(1), m.size(1), x.dtype(), x.device());
  std::vector<Tensor> outs;
  for (int64_t h = 0; h < heads; ++h) {
    Tensor s = ops::matmul(q.narrow(2, h * d, d), k.narrow(2, h * d, d).transpose(1, 2));
    if (mask.defined()) s = ops::add(s, mask.select(1, 0));
    Tensor p = ops::softmax(s, -1);
    p = ops::masked_fill(p, ops::ne(p, p), 0.0);  // rows with no visible key
    outs.push_back(ops::matmul(p, v.narrow(2, h * d, d)));
  }
  return ops::add(ops::matmul(ops::cat(outs, 2), a.out_proj->weight.transpose(0, 1)), a.out_proj->bias);
}

}  // namespace

TEST_CASE("softmax attention: fairseq parameter names and initialisation") {
  nn::SoftmaxAttention a(options(64, 4, false));
  std::vector<std::string> names;
  for (auto& [name, t] : a.state_dict()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                                          "v_proj.weight", "v_proj.bias", "out_proj.weight", "out_proj.bias"});
  const double xavier = std::sqrt(6.0 / 128.0);
  auto max_abs = [](const Tensor& t) { return ops::amax(ops::abs(t)).item(); };
  for (auto* proj : {&a.q_proj, &a.k_proj, &a.v_proj}) {
    CHECK(max_abs((*proj)->weight) <= xavier / std::sqrt(2.0));
    CHECK(max_abs((*proj)->weight) > 0.95 * xavier / std::sqrt(2.0));
    CHECK(max_abs((*proj)->bias) == 0.0);
  }
  CHECK(max_abs(a.out_proj->weight) > xavier / std::sqrt(2.0));
  CHECK(max_abs(a.out_proj->weight) <= xavier);
  CHECK_THROWS_WITH(nn::SoftmaxAttention(options(10, 4, false)), Catch::Contains("multiple of num_heads"));
}

TEST_CASE("softmax attention forward equals the per-head formulas (self, causal, cross; with padding)") {
  nn::SoftmaxAttention self(options(8, 2, false)), cross(options(8, 2, true));
  Generator gen(3);
  Tensor x = uniform({2, 4, 8}, -1, 1, DType::Float32, &gen), memory = uniform({2, 5, 8}, -1, 1, DType::Float32, &gen);
  Tensor self_pad = padding({1, 0, 0, 0, 0, 0, 0, 0}, 2), memory_pad = padding({1, 1, 0, 0, 0, 0, 0, 0, 0, 1}, 2);
  NoGradGuard no_grad;
  for (bool causal : {false, true}) {
    nn::MixerContext ctx;
    ctx.key_padding_mask = self_pad;
    ctx.causal = causal;
    Tensor weights;
    ctx.attention_weights = &weights;
    check_close(self.forward(x, ctx), reference(self, x, x, self_pad, causal, 2), 1e-5);
    REQUIRE(weights.shape() == Shape{2, 2, 4, 4});
    CHECK(weights.at({0, 1, 2, 0}) == 0.0);                     // padded key
    CHECK(weights.at({1, 0, 1, 3}) == (causal ? 0.0 : weights.at({1, 0, 1, 3})));  // future key
    CHECK(ops::sum(weights.select(0, 1).select(0, 0).select(0, 2)).item() == Approx(1.0));
  }
  nn::MixerContext ctx;
  ctx.memory = memory;
  ctx.key_padding_mask = memory_pad;
  check_close(cross.forward(x, ctx), reference(cross, x, memory, memory_pad, false, 2), 1e-5);
  ctx.memory = Tensor();
  CHECK_THROWS_WITH(cross.forward(x, ctx), Catch::Contains("encoder output"));
}

TEST_CASE("softmax attention gradcheck in float64 (input and every parameter)") {
  Tensor pad = padding({0, 0, 1, 1, 0, 0}, 2);
  nn::SoftmaxAttention self(options(4, 2, false));
  Leaves inputs = {leaf({2, 3, 4}, 5)};
  append(inputs, to_float64(self));
  auto f_self = [&](const std::vector<Tensor>& in) {
    nn::MixerContext ctx;
    ctx.key_padding_mask = pad;
    ctx.causal = true;
    return self.forward(in[0], ctx);
  };
  GradcheckResult r = gradcheck(f_self, inputs);
  INFO(r.message);
  CHECK(r.ok);

  nn::SoftmaxAttention cross(options(4, 2, true));
  Leaves cross_inputs = {leaf({2, 2, 4}, 6), leaf({2, 3, 4}, 7)};
  append(cross_inputs, to_float64(cross));
  auto f_cross = [&](const std::vector<Tensor>& in) {
    nn::MixerContext ctx;
    ctx.memory = in[1];
    ctx.key_padding_mask = pad;
    return cross.forward(in[0], ctx);
  };
  GradcheckResult rc = gradcheck(f_cross, cross_inputs);
  INFO(rc.message);
  CHECK(rc.ok);
}

TEST_CASE("softmax attention steps (KV cache, cross K/V once, reorder) equal the parallel forward") {
  nn::SoftmaxAttention self(options(8, 2, false)), cross(options(8, 2, true));
  self.eval();
  cross.eval();
  Generator gen(9);
  Tensor x = uniform({3, 5, 8}, -1, 1, DType::Float32, &gen), memory = uniform({3, 4, 8}, -1, 1, DType::Float32, &gen);
  Tensor memory_pad = padding({1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0}, 3);
  NoGradGuard no_grad;
  nn::MixerContext self_ctx;
  self_ctx.causal = true;
  nn::MixerContext cross_ctx;
  cross_ctx.memory = memory;
  cross_ctx.key_padding_mask = memory_pad;
  Tensor full_self = self.forward(x, self_ctx), full_cross = cross.forward(x, cross_ctx);

  auto self_state = self.init_state(3, self_ctx);
  auto cross_state = cross.init_state(3, cross_ctx);
  nn::MixerContext step_cross_ctx;
  step_cross_ctx.key_padding_mask = memory_pad;
  for (int64_t t = 0; t < 5; ++t) {
    Tensor xt = x.narrow(1, t, 1);
    check_close(self.step(xt, *self_state, nn::MixerContext{}), full_self.narrow(1, t, 1), 1e-5);
    check_close(cross.step(xt, *cross_state, step_cross_ctx), full_cross.narrow(1, t, 1), 1e-5);
  }

  // Reorder after 2 steps to rows (2, 0, 0): continuing equals the forward on those rows.
  Tensor order = from_vector<int64_t>({2, 0, 0}, {3});
  Tensor x2 = ops::index_select(x, 0, order);
  Tensor full2 = self.forward(x2, self_ctx);
  auto state = self.init_state(3, self_ctx);
  for (int64_t t = 0; t < 2; ++t) self.step(x.narrow(1, t, 1), *state, nn::MixerContext{});
  self.reorder(*state, order);
  for (int64_t t = 2; t < 5; ++t)
    check_close(self.step(x2.narrow(1, t, 1), *state, nn::MixerContext{}), full2.narrow(1, t, 1), 1e-5);
  CHECK_THROWS_AS(self.step(x.narrow(1, 0, 2), *state, nn::MixerContext{}), Error);
}

TEST_CASE("mixer registry: builds softmax, accepts new families, rejects unknown kinds") {
  CHECK(nn::create_mixer(options(8, 2, false))->kind() == "softmax");
  nn::MixerOptions unknown = options(8, 2, false);
  unknown.kind = "nonexistent:variant";
  CHECK_THROWS_WITH(nn::create_mixer(unknown), Catch::Contains("unknown token mixer 'nonexistent:variant'") &&
                                                   Catch::Contains("softmax"));
  std::string seen_kind;
  nn::register_mixer("test_family", [&](const nn::MixerOptions& o) {
    seen_kind = o.kind;
    return std::make_shared<nn::SoftmaxAttention>(o);
  });
  unknown.kind = "test_family:x+y";
  CHECK(nn::create_mixer(unknown) != nullptr);
  CHECK(seen_kind == "test_family:x+y");
  CHECK_THROWS_AS(nn::register_mixer("bad:name", nullptr), Error);
}
