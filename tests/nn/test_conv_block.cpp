// The LightConv / DynamicConv block (nn/mixers/conv_block.hpp, docs/models.md §3): fairseq
// names and shapes, the forward against a plain float64 loop, a sentence's output alone
// equal to inside any batch (and fairseq's softmax span that breaks this, on request),
// float64 gradchecks, decoding steps equal to the parallel forward, DropConnect.
#include <catch.hpp>

#include <cmath>

#include "../autograd/grad_test_util.hpp"
#include "float64_params.hpp"
#include "nn/mixers/mixer_registry.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;
using attn::test::check_close;

namespace {

nn::MixerOptions conv_options(const std::string& kind, int64_t dim, int64_t heads, int64_t kernel, bool glu = true) {
  nn::MixerOptions o;
  o.kind = kind;
  o.embed_dim = dim;
  o.num_heads = heads;
  o.conv.kernel_size = kernel;
  o.conv.glu = glu;
  o.conv.input_dropout = 0.1;  // off in eval; the tests run the block in eval unless they say
  return o;
}

std::shared_ptr<nn::ConvBlock> block(const std::string& kind, int64_t dim, int64_t heads, int64_t kernel,
                                     bool glu = true) {
  manual_seed(11);
  auto b = std::dynamic_pointer_cast<nn::ConvBlock>(nn::create_mixer(conv_options(kind, dim, heads, kernel, glu)));
  REQUIRE(b != nullptr);
  b->eval();
  return b;
}

std::vector<double> values_of(const Tensor& t) { return t.to(DType::Float64).to_vector(); }

// y = W2 · conv(GLU(W1 x + b1)) + b2 with plain loops in double; pad[b][t] rows of u zeroed.
std::vector<double> reference(nn::ConvBlock& m, const Tensor& x, const std::vector<std::vector<int>>& pad,
                              bool causal, int64_t heads, int64_t kernel, bool dynamic, bool glu) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2);
  const std::vector<double> xs = values_of(x), w1 = values_of(m.linear1->weight), b1 = values_of(m.linear1->bias),
                            w2 = values_of(m.linear2->weight), b2 = values_of(m.linear2->bias);
  const int64_t C = m.linear2->weight.size(1), R = C / heads, P = causal ? kernel - 1 : (kernel - 1) / 2;
  std::vector<double> u(static_cast<size_t>(B * T * C));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        auto row = [&](int64_t o) {
          double s = b1[size_t(o)];
          for (int64_t i = 0; i < D; ++i) s += w1[size_t(o * D + i)] * xs[size_t((b * T + t) * D + i)];
          return s;
        };
        double v = glu ? row(c) / (1.0 + std::exp(-row(C + c))) : row(c);
        u[size_t((b * T + t) * C + c)] = (!pad.empty() && pad[size_t(b)][size_t(t)]) ? 0.0 : v;
      }
  auto taps = [&](int64_t b, int64_t t, int64_t h) {
    std::vector<double> logits(static_cast<size_t>(kernel));
    if (dynamic) {
      const std::vector<double> wd = values_of(m.conv->weight_linear->weight);
      for (int64_t j = 0; j < kernel; ++j)
        for (int64_t c = 0; c < C; ++c)
          logits[size_t(j)] += wd[size_t((h * kernel + j) * C + c)] * u[size_t((b * T + t) * C + c)];
    } else {
      const std::vector<double> w = values_of(m.conv->weight);
      for (int64_t j = 0; j < kernel; ++j) logits[size_t(j)] = w[size_t(h * kernel + j)];
    }
    double max = logits[0], sum = 0;
    for (double l : logits) max = std::max(max, l);
    for (double& l : logits) sum += (l = std::exp(l - max));
    for (double& l : logits) l /= sum;
    return logits;
  };
  std::vector<double> y(static_cast<size_t>(B * T * D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> o(static_cast<size_t>(C));
      for (int64_t h = 0; h < heads; ++h) {
        const std::vector<double> w = taps(b, t, h);
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < kernel; ++j) {
            const int64_t s = t + j - P, c = h * R + r;
            if (s >= 0 && s < T) o[size_t(c)] += w[size_t(j)] * u[size_t((b * T + s) * C + c)];
          }
      }
      for (int64_t d = 0; d < D; ++d) {
        double v = b2[size_t(d)];
        for (int64_t c = 0; c < C; ++c) v += w2[size_t(d * C + c)] * o[size_t(c)];
        y[size_t((b * T + t) * D + d)] = v;
      }
    }
  return y;
}

}  // namespace

TEST_CASE("conv block: fairseq names and shapes") {
  auto light = block("lightconv", 8, 2, 3);
  std::vector<std::string> names;
  for (const auto& [name, t] : light->state_dict()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"linear1.weight", "linear1.bias", "conv.weight", "linear2.weight",
                                          "linear2.bias"});
  CHECK(light->conv->weight.shape() == Shape{2, 1, 3});
  CHECK(light->linear1->weight.shape() == Shape{16, 8});  // GLU: D -> 2C
  auto dynamic = block("dynamicconv", 8, 2, 5, false);
  CHECK(dynamic->conv->weight_linear->weight.shape() == Shape{10, 8});
  CHECK_FALSE(dynamic->conv->weight_linear->bias.defined());
  CHECK(dynamic->linear1->weight.shape() == Shape{8, 8});
  CHECK(dynamic->kind() == "dynamicconv");
  nn::MixerOptions cross = conv_options("lightconv", 8, 2, 3);
  cross.cross_attention = true;
  CHECK_THROWS_WITH(nn::create_mixer(cross), Catch::Contains("cannot attend to the encoder"));
}

TEST_CASE("conv block forward equals the float64 loop (centred with pads, causal; light and dynamic)") {
  for (const char* kind : {"lightconv", "dynamicconv"})
    for (bool causal : {false, true})
      for (bool glu : {true, false}) {
        const bool dynamic = std::string(kind) == "dynamicconv";
        auto m = block(kind, 8, 2, causal ? 4 : 5, glu);
        const Tensor x = normal({2, 6, 8}, 0, 1, DType::Float32);
        std::vector<std::vector<int>> pad;
        nn::MixerContext ctx;
        ctx.causal = causal;
        if (!causal) {
          pad = {{1, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}};
          ctx.key_padding_mask = pad_mask(pad);
        }
        INFO(kind << (causal ? " causal" : " centred") << (glu ? " glu" : ""));
        const std::vector<double> expected = reference(*m, x, pad, causal, 2, causal ? 4 : 5, dynamic, glu);
        const std::vector<double> got = values_of(m->forward(x, ctx));
        REQUIRE(got.size() == expected.size());
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5));
      }
}

TEST_CASE("conv block: a sentence's output alone equals its output in a batch (default softmax span)") {
  for (const char* kind : {"lightconv", "dynamicconv"})
    for (bool causal : {false, true}) {
      auto m = block(kind, 8, 2, 7);
      const Tensor sentence = normal({1, 3, 8}, 0, 1, DType::Float32);
      const Tensor other = normal({1, 6, 8}, 0, 1, DType::Float32);
      nn::MixerContext alone_ctx;
      alone_ctx.causal = causal;
      const Tensor alone = m->forward(sentence, alone_ctx);
      // In a batch of length 6: left-padded in the encoder, right-padded in the decoder.
      Tensor padded = zeros({1, 6, 8});
      padded.narrow(1, causal ? 0 : 3, 3).copy_(sentence);
      nn::MixerContext batch_ctx;
      batch_ctx.causal = causal;
      if (!causal) batch_ctx.key_padding_mask = pad_mask({{1, 1, 1, 0, 0, 0}, std::vector<int>(6, 0)});
      const Tensor both = m->forward(ops::cat({padded, other}, 0), batch_ctx);
      INFO(kind << (causal ? " causal" : " centred"));
      check_close(both.narrow(0, 0, 1).narrow(1, causal ? 0 : 3, 3), alone, 1e-5);
    }
}

TEST_CASE("conv block: fairseq's DynamicConv softmax span makes a prefix depend on the padded length") {
  nn::MixerOptions o = conv_options("dynamicconv", 8, 2, 7);
  o.conv.fairseq_softmax_span = true;
  manual_seed(11);
  auto m = nn::create_mixer(o);
  m->eval();
  const Tensor x = normal({1, 6, 8}, 0, 1, DType::Float32);
  nn::MixerContext ctx;
  ctx.causal = true;
  const Tensor prefix = m->forward(x.narrow(1, 0, 3), ctx), full = m->forward(x, ctx);
  const double gap = ops::amax(ops::abs(ops::sub(prefix, full.narrow(1, 0, 3)))).item();
  CHECK(gap > 1e-3);
}

TEST_CASE("conv block gradcheck in float64 (input and every parameter)") {
  for (const char* kind : {"lightconv", "dynamicconv"})
    for (bool causal : {false, true}) {
      auto m = block(kind, 4, 2, 3);
      Leaves inputs = {leaf({2, 4, 4}, 21)};
      append(inputs, to_float64(*m));
      const Tensor pad = pad_mask({{1, 0, 0, 0}, {0, 0, 0, 0}});
      auto f = [&](const std::vector<Tensor>& in) {
        nn::MixerContext ctx;
        ctx.causal = causal;
        if (!causal) ctx.key_padding_mask = pad;
        return m->forward(in[0], ctx);
      };
      GradcheckResult r = gradcheck(f, inputs);
      INFO(kind << (causal ? " causal: " : " centred: ") << r.message);
      CHECK(r.ok);
    }
}

TEST_CASE("conv block: decoding steps (window of K-1 inputs, reorder) equal the parallel forward") {
  for (const char* kind : {"lightconv", "dynamicconv"})
    for (int64_t kernel : {1, 3, 5}) {
      auto m = block(kind, 8, 2, kernel);
      const Tensor x = normal({2, 7, 8}, 0, 1, DType::Float32);
      nn::MixerContext ctx;
      ctx.causal = true;
      const Tensor full = m->forward(x, ctx);
      NoGradGuard no_grad;
      auto state = m->init_state(2, ctx);
      for (int64_t t = 0; t < 7; ++t) {
        INFO(kind << " K=" << kernel << " t=" << t);
        check_close(m->step(x.narrow(1, t, 1), *state, ctx), full.narrow(1, t, 1), 1e-5);
      }
      // Swap the two sequences: the next step follows the reordered history.
      auto swapped = m->init_state(2, ctx);
      const Tensor reversed = ops::cat({x.narrow(0, 1, 1), x.narrow(0, 0, 1)}, 0);
      for (int64_t t = 0; t < 6; ++t) m->step(x.narrow(1, t, 1), *swapped, ctx);
      m->reorder(*swapped, from_vector<int64_t>({1, 0}, {2}));
      check_close(m->step(reversed.narrow(1, 6, 1), *swapped, ctx), m->forward(reversed, ctx).narrow(1, 6, 1), 1e-5);
    }
}

TEST_CASE("conv block: DropConnect on the normalised taps in training only") {
  nn::MixerOptions o = conv_options("lightconv", 8, 2, 3);
  o.conv.weight_dropout = 0.5;
  o.conv.input_dropout = 0.0;
  manual_seed(3);
  auto m = nn::create_mixer(o);
  const Tensor x = normal({2, 5, 8}, 0, 1, DType::Float32);
  nn::MixerContext ctx;
  m->eval();
  const Tensor a = m->forward(x, ctx), b = m->forward(x, ctx);
  check_close(a, b, 0.0);
  m->train();
  const Tensor dropped = m->forward(x, ctx);
  CHECK(ops::amax(ops::abs(ops::sub(dropped, a))).item() > 1e-3);
}

TEST_CASE("conv block: the implied map (taps on the band) gives the block's output") {
  for (const char* kind : {"lightconv", "dynamicconv"})
    for (bool causal : {false, true}) {
      auto m = block(kind, 8, 2, causal ? 4 : 3, false);
      const Tensor x = normal({2, 6, 8}, 0, 1, DType::Float32);
      Tensor map;
      nn::MixerContext ctx;
      ctx.causal = causal;
      ctx.attention_weights = &map;
      if (!causal) ctx.key_padding_mask = pad_mask({{1, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}});
      INFO(kind << (causal ? " causal" : " centred"));
      const Tensor out = m->forward(x, ctx);
      REQUIRE(map.shape() == Shape({2, 2, 6, 6}));
      const Tensor u = permute(view(m->linear1->forward(x), {2, 6, 2, 4}), {0, 2, 1, 3});  // no GLU: [B, H, T, C/H]
      const Tensor mixed = reshape(permute(matmul(map, u), {0, 2, 1, 3}), {2, 6, 8});
      check_close(m->linear2->forward(mixed), out, 1e-5);
      const std::vector<double> a = map.to_vector();
      CHECK(a[1] == 0.0);                                // sentence 0, output 0 reads no pad (centred) / no future (causal)
      CHECK(a[5] == 0.0);                                // output 0 never reaches position 5 with K ≤ 4
      if (causal) CHECK(a[6 * 3 + 3] != 0.0);            // output 3 reads itself (the last tap)
    }
}
