// Tests of nn/search/sampling (fairseq's --sampling, --sampling-topk, --sampling-topp): the
// draws follow the model's distribution (frequencies over many rows within a few standard
// deviations), top-k and top-p draw only from their sets, in proportion, −∞ is never drawn,
// the same seed gives the same tokens and each call takes fresh counters.
#include <catch.hpp>

#include <cmath>
#include <limits>
#include <map>

#include "nn/search/sampling.hpp"

using namespace attn;

namespace {

constexpr int64_t kRows = 20000;

// kRows identical rows of log(probs).
Tensor repeated_row(const std::vector<double>& probs) {
  std::vector<float> values;
  for (int64_t r = 0; r < kRows; ++r)
    for (double p : probs) values.push_back(p > 0.0 ? float(std::log(p)) : -std::numeric_limits<float>::infinity());
  return from_vector(values, {kRows, int64_t(probs.size())});
}

std::map<int64_t, double> frequencies(const std::vector<nn::Draw>& draws) {
  std::map<int64_t, double> counts;
  for (const nn::Draw& d : draws) counts[d.token] += 1.0 / double(draws.size());
  return counts;
}

// Each frequency within 5 standard deviations of its probability, and nothing else drawn.
void check_frequencies(const std::vector<nn::Draw>& draws, const std::map<int64_t, double>& expected) {
  const std::map<int64_t, double> got = frequencies(draws);
  for (const auto& [token, frequency] : got) {
    INFO("token " << token);
    REQUIRE(expected.count(token) == 1);
    const double p = expected.at(token);
    CHECK(std::abs(frequency - p) <= 5.0 * std::sqrt(p * (1.0 - p) / double(kRows)) + 1e-12);
  }
  for (const auto& [token, p] : expected)
    if (p > 0.01) CHECK(got.count(token) == 1);
}

}  // namespace

TEST_CASE("sampling draws each token with its probability and never a -inf one") {
  const std::vector<double> probs = {0.5, 0.0, 0.3, 0.15, 0.05};  // token 1 at −∞
  nn::SamplingOptions options;
  options.generator = std::make_shared<Generator>(7);
  check_frequencies(nn::sample_tokens(repeated_row(probs), options), {{0, 0.5}, {2, 0.3}, {3, 0.15}, {4, 0.05}});
}

TEST_CASE("top-k draws among the k most probable, top-p among the nucleus, each renormalised") {
  const std::vector<double> probs = {0.05, 0.5, 0.15, 0.3};
  nn::SamplingOptions options;
  options.generator = std::make_shared<Generator>(8);
  options.topk = 2;
  check_frequencies(nn::sample_tokens(repeated_row(probs), options), {{1, 0.5 / 0.8}, {3, 0.3 / 0.8}});
  options.topk = 0;
  options.topp = 0.6;  // 0.5 stays below 0.6; 0.3 reaches it
  check_frequencies(nn::sample_tokens(repeated_row(probs), options), {{1, 0.5 / 0.8}, {3, 0.3 / 0.8}});
  options.topp = 0.85;  // 0.5, 0.8 below; 0.15 reaches it
  check_frequencies(nn::sample_tokens(repeated_row(probs), options),
                    {{1, 0.5 / 0.95}, {3, 0.3 / 0.95}, {2, 0.15 / 0.95}});
  options.topp = 0.4;  // the most probable alone
  check_frequencies(nn::sample_tokens(repeated_row(probs), options), {{1, 1.0}});
}

TEST_CASE("the same seed gives the same draws; each call draws new numbers; bad options are refused") {
  const Tensor rows = repeated_row({0.25, 0.25, 0.25, 0.25});
  nn::SamplingOptions first, second;
  first.generator = std::make_shared<Generator>(9);
  second.generator = std::make_shared<Generator>(9);
  const auto tokens = [](const std::vector<nn::Draw>& draws) {
    std::vector<int64_t> out;
    for (const nn::Draw& d : draws) out.push_back(d.token);
    return out;
  };
  const std::vector<int64_t> a = tokens(nn::sample_tokens(rows, first)), b = tokens(nn::sample_tokens(rows, second));
  CHECK(a == b);
  CHECK(tokens(nn::sample_tokens(rows, first)) != a);
  first.topp = 1.5;
  CHECK_THROWS_AS(nn::sample_tokens(rows, first), Error);
}
