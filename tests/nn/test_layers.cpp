// nn/layers: Linear, Embedding (and FixNorm), word dropout, LayerNorm, ScaleNorm, FeedForward (and its
// gated form), the lexical model and fairseq positions (docs/models.md §1.2–1.4.1): forward values
// against plain references, initialisation ranges, float64 gradchecks, and the sinusoid layout and
// §8 anchors.
#include <catch.hpp>

#include <cmath>

#include "../autograd/grad_test_util.hpp"
#include "float64_params.hpp"
#include "nn/layers/lexical_model.hpp"
#include "nn/layers/positional_embedding.hpp"
#include "nn/layers/word_dropout.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

// max |t| and the sample standard deviation.
std::pair<double, double> spread(const Tensor& t) {
  std::vector<double> v = t.to_vector();
  double max = 0, sum = 0, sq = 0;
  for (double x : v) {
    max = std::max(max, std::abs(x));
    sum += x;
    sq += x * x;
  }
  const double n = double(v.size()), mean = sum / n;
  return {max, std::sqrt(sq / n - mean * mean)};
}

}  // namespace

TEST_CASE("Linear computes x Wᵀ + b and gradchecks in float64") {
  nn::Linear lin(3, 2);
  Leaves params = to_float64(lin);
  lin.weight.data_only().copy_(from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}));
  lin.bias.data_only().copy_(from_vector<double>({0.5, -1}, {2}));
  Tensor x = from_vector<double>({1, 0, -1, 2, 1, 0}, {2, 3});
  CHECK(values(lin.forward(x)) == std::vector<double>{-1.5, -3, 4.5, 12});

  Leaves inputs = {leaf({2, 4, 3}, 1)};
  append(inputs, params);
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return lin.forward(in[0]); }, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("Linear initialisations: Xavier-uniform with gain and zero bias, or PyTorch's default") {
  nn::Linear xavier(200, 100, true, nn::LinearInit::Xavier, 1.0 / std::sqrt(2.0));
  const double bound = std::sqrt(6.0 / 300.0) / std::sqrt(2.0);
  auto [max, stddev] = spread(xavier.weight);
  CHECK(max <= bound);
  CHECK(max > 0.98 * bound);
  CHECK(stddev == Approx(bound / std::sqrt(3.0)).epsilon(0.03));  // U(-a, a) has std a/√3
  CHECK(spread(xavier.bias).first == 0.0);

  nn::Linear torch(400, 50, true, nn::LinearInit::TorchDefault);
  CHECK(spread(torch.weight).first <= 1.0 / 20.0);
  CHECK(spread(torch.weight).first > 0.98 / 20.0);
  CHECK(spread(torch.bias).first <= 1.0 / 20.0);
  CHECK(spread(torch.bias).first > 0.0);
  CHECK(!nn::Linear(3, 2, false).bias.defined());
  CHECK(nn::Linear(3, 2, false).state_dict().size() == 1);
}

TEST_CASE("Embedding: N(0, 1/D) with a zero padding row that receives no gradient") {
  nn::Embedding emb(500, 64, 1);
  CHECK(spread(emb.weight.select(0, 1)).first == 0.0);
  CHECK(spread(emb.weight).second == Approx(1.0 / 8.0).epsilon(0.03));

  nn::Embedding small(10, 3, 1);
  Leaves params = to_float64(small);
  // The pad row is excluded from differentiation (PyTorch's padding_idx), so the
  // finite-difference check uses real tokens only.
  Tensor ids = from_vector<int64_t>({4, 0, 7, 4, 2, 9}, {2, 3});
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>&) { return small.forward(ids); }, params);
  INFO(r.message);
  CHECK(r.ok);
  zero_grad(params[0]);
  backward(sum(small.forward(from_vector<int64_t>({4, 1, 7, 4, 1}, {5}))));
  CHECK(spread(grad(params[0]).select(0, 1)).first == 0.0);  // pad row
  CHECK(grad(params[0]).at({4, 0}) == 2.0);                   // token 4 used twice
}

TEST_CASE("word dropout: whole token rows zeroed with probability p, the rest scaled by 1/(1-p)") {
  const double p = 0.3;
  Tensor x = leaf({8, 250, 4}, 11, 0.5, 1.5);  // no element is 0, so a zero means dropped
  CHECK(nn::word_dropout(x, p, false).data<double>() == x.data<double>());
  CHECK(nn::word_dropout(x, 0.0, true).data<double>() == x.data<double>());

  Generator gen(5);
  const std::vector<double> in = values(x), out = values(nn::word_dropout(x, p, true, &gen));
  int64_t dropped = 0;
  for (size_t row = 0; row < in.size() / 4; ++row) {
    const bool zero = out[4 * row] == 0.0;
    dropped += zero;
    for (size_t d = 0; d < 4; ++d) CHECK(out[4 * row + d] == Approx(zero ? 0.0 : in[4 * row + d] / (1 - p)));
  }
  CHECK(std::abs(double(dropped) / 2000.0 - p) < 0.05);  // 2,000 rows: σ of the fraction 0.01

  Generator again(5);  // the same stream, the same tokens dropped
  CHECK(values(nn::word_dropout(x, p, true, &again)) == out);
  CHECK_THROWS_WITH(nn::word_dropout(x, 1.0, true), Catch::Contains("[0, 1)"));
  CHECK_THROWS_WITH(nn::word_dropout(leaf({3, 4}, 1), p, true), Catch::Contains("[B, T, D]"));
}

TEST_CASE("word dropout gradchecks in float64 with the mask held fixed") {
  Leaves inputs = {leaf({2, 5, 3}, 12)};
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) {
        Generator gen(9);  // every evaluation draws the same mask
        return nn::word_dropout(in[0], 0.5, true, &gen);
      },
      inputs);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("LayerNorm: ε = 1e-5, affine, gradcheck in float64") {
  nn::LayerNorm norm(4);
  CHECK(norm.eps == 1e-5);
  Leaves params = to_float64(norm);
  Tensor x = from_vector<double>({1, 2, 3, 4}, {1, 4});
  std::vector<double> y = values(norm.forward(x));
  const double rstd = 1.0 / std::sqrt(1.25 + 1e-5);
  CHECK(y[0] == Approx(-1.5 * rstd));
  CHECK(y[3] == Approx(1.5 * rstd));

  params[0].data_only().copy_(from_vector<double>({1, -2, 0.5, 3}, {4}));
  params[1].data_only().copy_(from_vector<double>({0.1, 0.2, 0.3, 0.4}, {4}));
  Leaves inputs = {leaf({3, 4}, 2)};
  append(inputs, params);
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return norm.forward(in[0]); }, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("ScaleNorm: g·x/max(‖x‖, ε) with g = √D, a zero row kept zero, gradcheck in float64") {
  nn::ScaleNorm norm(4);
  CHECK(norm.eps == 1e-5);
  CHECK(norm.scale.to_vector() == std::vector<double>{2.0});
  Leaves params = to_float64(norm);
  std::vector<double> y = values(norm.forward(from_vector<double>({1, 2, 3, 4, 0, 0, 0, 0}, {2, 4})));
  const double length = std::sqrt(30.0);  // ‖(1, 2, 3, 4)‖
  for (int i = 0; i < 4; ++i) CHECK(y[i] == Approx(2.0 * (i + 1) / length));
  for (int i = 4; i < 8; ++i) CHECK(y[i] == 0.0);

  params[0].data_only().fill_(0.7);
  Leaves inputs = {leaf({3, 4}, 4)};
  append(inputs, params);
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return norm.forward(in[0]); }, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("FixNorm embedding: looked-up rows at unit length, the pad row zero, gradcheck in float64") {
  nn::Embedding emb(10, 3, 1, /*fix_norm=*/true);
  Leaves params = to_float64(emb);
  Tensor ids = from_vector<int64_t>({4, 1, 7, 4, 2, 9}, {2, 3});
  std::vector<double> rows = values(emb.forward(ids));
  for (int r = 0; r < 6; ++r) {
    double sq = 0;
    for (int d = 0; d < 3; ++d) sq += rows[3 * r + d] * rows[3 * r + d];
    CHECK(sq == Approx(r == 1 ? 0.0 : 1.0));  // position 1 holds the pad id
  }
  std::vector<double> w = values(emb.weight.select(0, 7));
  const double length = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  for (int d = 0; d < 3; ++d) CHECK(rows[6 + d] == Approx(w[d] / length));

  Tensor real = from_vector<int64_t>({4, 0, 7, 4, 2, 9}, {2, 3});
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>&) { return emb.forward(real); }, params);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("FeedForward is fc2(ActDrop(ReLU(fc1 x))) and gradchecks in float64") {
  nn::FeedForward ffn(3, 5, 0.0, nn::LinearInit::TorchDefault);
  Leaves params = to_float64(ffn);
  Tensor x = leaf({2, 3}, 3);
  Tensor expected = linear(relu(linear(x, ffn.fc1->weight, ffn.fc1->bias)), ffn.fc2->weight, ffn.fc2->bias);
  CHECK(values(ffn.forward(x, true)) == values(expected));
  Leaves inputs = {x};
  append(inputs, params);
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return ffn.forward(in[0], true); }, inputs);
  INFO(r.message);
  CHECK(r.ok);

  nn::FeedForward dropped(3, 50, 0.5, nn::LinearInit::Xavier);
  Tensor x32 = ones({4, 3});
  CHECK(values(dropped.forward(x32, false)) == values(dropped.forward(x32, false)));
  CHECK(values(dropped.forward(x32, true)) != values(dropped.forward(x32, false)));
}

TEST_CASE("gated FeedForward (GEGLU) is fc2(u ⊙ GELU(g)) with [u, g] = fc1 x, and gradchecks in float64") {
  nn::FeedForward ffn(3, 4, 0.0, nn::LinearInit::TorchDefault, /*gated=*/true);
  CHECK(ffn.fc1->weight.shape() == Shape{8, 3});
  CHECK(ffn.fc2->weight.shape() == Shape{3, 4});
  Leaves params = to_float64(ffn);
  Tensor x = leaf({2, 5, 3}, 4);
  const std::vector<double> h = values(linear(x, ffn.fc1->weight, ffn.fc1->bias));
  std::vector<double> gated;  // u ⊙ GELU(g) from the exact GELU, x Φ(x)
  for (size_t row = 0; row < h.size() / 8; ++row)
    for (size_t j = 0; j < 4; ++j) {
      const double u = h[row * 8 + j], g = h[row * 8 + 4 + j];
      gated.push_back(u * 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0))));
    }
  Tensor expected = linear(from_vector(gated, {2, 5, 4}), ffn.fc2->weight, ffn.fc2->bias);
  const std::vector<double> got = values(ffn.forward(x, true)), want = values(expected);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-6));
  Leaves inputs = {x};
  append(inputs, params);
  GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return ffn.forward(in[0], true); }, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("lexical model (§1.2.2): h = tanh(W f), f = tanh(attention · embeddings), W from zero, gradcheck") {
  const int64_t B = 2, T = 3, S = 4, D = 3;
  nn::LexicalModel lexical(D);
  CHECK(ops::amax(ops::abs(lexical.proj->weight)).item() == 0.0);  // the term starts at zero
  lexical.proj->weight.data_only().copy_(uniform({D, D}, -1.0, 1.0));
  Leaves params = to_float64(*lexical.proj);
  Tensor attention = ops::softmax(leaf({B, T, S}, 21), -1), embeddings = leaf({B, S, D}, 22);
  const std::vector<double> a = values(attention), e = values(embeddings), w = values(lexical.proj->weight);
  std::vector<double> expected;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> f(D, 0.0);
      for (int64_t d = 0; d < D; ++d) {
        for (int64_t s = 0; s < S; ++s) f[d] += a[(b * T + t) * S + s] * e[(b * S + s) * D + d];
        f[d] = std::tanh(f[d]);
      }
      for (int64_t o = 0; o < D; ++o) {
        double wf = 0.0;
        for (int64_t d = 0; d < D; ++d) wf += w[o * D + d] * f[d];
        expected.push_back(std::tanh(wf));
      }
    }
  const std::vector<double> got = values(lexical.forward(attention, embeddings));
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).epsilon(1e-12));

  Leaves inputs = {leaf({B, T, S}, 23), embeddings};
  append(inputs, params);
  GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return lexical.forward(in[0], in[1]); }, inputs);
  INFO(r.message);
  CHECK(r.ok);
  CHECK_THROWS_WITH(lexical.forward(attention, leaf({B, S + 1, D}, 24)),
                    Catch::Contains("attention [B, T, S] and source embeddings [B, S, 3] do not match"));
}

TEST_CASE("make_positions: pads get padding_idx, real tokens count from padding_idx + 1") {
  Tensor tokens = from_vector<int64_t>({1, 1, 5, 6, 2, 7, 8, 9, 1, 1}, {2, 5});
  CHECK(values(nn::make_positions(tokens, 1)) == std::vector<double>{1, 1, 2, 3, 4, 2, 3, 4, 1, 1});
}

TEST_CASE("sinusoidal table: fairseq layout (sin half, cos half) and the §8 anchors") {
  Tensor table = nn::sinusoidal_table(5, 1024, 1);
  CHECK(table.at({2, 0}) == Approx(0.909297).margin(1e-6));
  CHECK(table.at({2, 1}) == Approx(0.923581).margin(1e-6));
  CHECK(table.at({2, 512}) == Approx(-0.416147).margin(1e-6));
  CHECK(table.at({3, 511}) == Approx(std::sin(3e-4)).margin(1e-7));  // ω_511 = 1e-4
  CHECK(table.at({3, 1023}) == Approx(std::cos(3e-4)).margin(1e-7));
  CHECK(spread(table.select(0, 1)).first == 0.0);  // the padding row
  const double omega1 = std::pow(10000.0, -1.0 / 511.0);
  CHECK(omega1 == Approx(0.982137).margin(1e-6));
  for (int64_t r : {0, 2, 4})
    for (int64_t i : {0, 7, 300})
      CHECK(table.at({r, 512 + i}) == Approx(std::cos(double(r) * std::pow(10000.0, -double(i) / 511.0))).margin(1e-5));

  Tensor odd = nn::sinusoidal_table(4, 7, 1);  // half = 3, then a zero column
  CHECK(odd.at({2, 1}) == Approx(std::sin(2.0 * std::pow(10000.0, -0.5))).margin(1e-6));
  CHECK(odd.at({3, 5}) == Approx(std::cos(3.0 * 1e-4)).margin(1e-6));
  CHECK(odd.at({3, 6}) == 0.0);
}

TEST_CASE("PositionalEmbedding: left padding never shifts real tokens; steps match the full forward") {
  nn::PositionalEmbedding pe(8, 6, 1, false);
  Tensor padded = from_vector<int64_t>({1, 1, 5, 6, 2}, {1, 5});
  Tensor plain = from_vector<int64_t>({5, 6, 2}, {1, 3});
  Tensor a = pe.forward(padded), b = pe.forward(plain);
  CHECK(values(a.narrow(1, 2, 3)) == values(b));
  CHECK(spread(a.narrow(1, 0, 2)).first == 0.0);
  for (int64_t length = 1; length <= 3; ++length)
    CHECK(values(pe.at_position(length, 2, Device::cpu()).select(0, 1)) ==
          values(b.narrow(1, length - 1, 1).select(0, 0)));
  // Extended on demand beyond max_positions.
  Tensor long_tokens = full({1, 20}, 5, DType::Int64);
  CHECK(pe.forward(long_tokens).at({0, 19, 0}) == Approx(std::sin(21.0)).margin(1e-5));
  CHECK(pe.state_dict().empty());

  nn::PositionalEmbedding learned(4, 6, 1, true);
  CHECK(learned.state_dict().at(0).first == "weight");
  CHECK(learned.state_dict().at(0).second.shape() == Shape{6, 6});
  CHECK(spread(learned.forward(padded).narrow(1, 0, 2)).first == 0.0);
  CHECK_THROWS_WITH(learned.forward(long_tokens), Catch::Contains("beyond the learned table"));
}

TEST_CASE("PositionalEmbedding: the bound from the shape never rejects a padded batch that fits the table") {
  // Positions are bounded on the host by padding_idx + T; a batch longer than the learned
  // table whose real tokens fit must still be accepted (the exact check runs only then).
  nn::PositionalEmbedding learned(3, 4, 1, true);
  Tensor padded = from_vector<int64_t>({1, 1, 1, 5, 6, 2}, {1, 6});
  CHECK(learned.forward(padded).shape() == Shape{1, 6, 4});
  CHECK_NOTHROW(learned.at_position(3, 2, Device::cpu()));
  CHECK_THROWS_WITH(learned.at_position(4, 2, Device::cpu()), Catch::Contains("position 5 is beyond the learned table of 5 rows"));
}
