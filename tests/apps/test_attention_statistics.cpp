// Per-head attention statistics (apps/inspection/attention_statistics.hpp): entropy and mean
// distance of uniform rows against their closed forms, padding left out, the distance to a
// teacher (0 to itself, the total variation to another map), mismatched models refused, a
// NaN weight in a real row refused naming its place, layer and head; and the axis labels of
// the heat maps of a long sentence (apps/plotting/heat_map.hpp), thinned to stay legible.
#include <catch.hpp>

#include <cmath>
#include <limits>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "apps/inspection/attention_statistics.hpp"
#include "apps/plotting/heat_map.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::app;

namespace {

// One layer per place, one head, batch of two sentences: source lengths 3 and 4 (left-padded
// to 4), target lengths 2 and 3 (right-padded to 3). Every real row is uniform over its real
// keys (causal for decoder self); padding cells hold `pad_value`.
nn::AttentionMaps uniform_maps(double pad_value) {
  const int64_t s = 4, t = 3;
  const std::vector<int64_t> source_start = {1, 0}, target_end = {2, 3};
  const auto map = [&](int place) {
    const int64_t q = place == 0 ? s : t, k = place == 1 ? t : s;
    std::vector<double> values(size_t(2 * q * k), pad_value);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < q; ++i) {
        const bool real_query = place == 0 ? i >= source_start[size_t(b)] : i < target_end[size_t(b)];
        if (!real_query) continue;
        const int64_t k0 = place == 1 ? 0 : source_start[size_t(b)];
        const int64_t k1 = place == 1 ? i + 1 : s;
        for (int64_t j = 0; j < k; ++j)
          values[size_t((b * q + i) * k + j)] = j >= k0 && j < k1 ? 1.0 / double(k1 - k0) : 0.0;
      }
    return from_doubles(values, {2, 1, q, k}, DType::Float32);
  };
  nn::AttentionMaps maps;
  maps.encoder_self = {map(0)};
  maps.decoder_self = {map(1)};
  maps.cross = {map(2)};
  return maps;
}

const BatchGeometry kGeometry{4, 3, {3, 4}, {2, 3}};

// The mean over rows of −ln(1/n) and of the mean |i − j| over the n keys of each row.
double mean_entropy(const std::vector<int64_t>& row_sizes) {
  double total = 0;
  for (int64_t n : row_sizes) total += std::log(double(n));
  return total / double(row_sizes.size());
}

}  // namespace

TEST_CASE("attention statistics: uniform rows have entropy ln n and their mean distance; padding does not count") {
  for (double pad_value : {0.0, 7.0}) {
    AttentionStatistics stats;
    stats.add(uniform_maps(pad_value), nullptr, kGeometry);
    CHECK(stats.sentences() == 2);
    // Encoder self: 3 rows over 3 keys, 4 rows over 4 keys.
    const HeadStatistics& encoder = stats.place(0)[0][0];
    CHECK(encoder.rows == 7);
    CHECK(encoder.entropy() == Approx(mean_entropy({3, 3, 3, 4, 4, 4, 4})));
    // Mean |i − j| of uniform rows: over 3 keys 2/3, 1/3·2, 2/3... per query i: (|i−0|+|i−1|+|i−2|)/3.
    const double three = (3.0 / 3 + 2.0 / 3 + 3.0 / 3), four = (6.0 / 4 + 4.0 / 4 + 4.0 / 4 + 6.0 / 4);
    CHECK(encoder.distance() == Approx((three + four) / 7));
    // Decoder self (causal): rows over 1, 2 keys and 1, 2, 3 keys.
    const HeadStatistics& decoder = stats.place(1)[0][0];
    CHECK(decoder.rows == 5);
    CHECK(decoder.entropy() == Approx(mean_entropy({1, 2, 1, 2, 3})));
    CHECK(decoder.distance() == Approx((0 + 0.5 + 0 + 0.5 + 1.0) / 5));
    // Cross: 2 rows over 3 source keys, 3 rows over 4.
    CHECK(stats.place(2)[0][0].entropy() == Approx(mean_entropy({3, 3, 4, 4, 4})));
    const nlohmann::json j = stats.to_json();
    CHECK(j["places"]["cross"][0][0]["distance"].is_null());
    CHECK_FALSE(j["places"]["cross"][0][0].contains("to_teacher"));
  }
}

TEST_CASE("attention statistics: the distance to a teacher is 0 to itself and the total variation to another map") {
  const nn::AttentionMaps maps = uniform_maps(0.0);
  AttentionStatistics itself;
  itself.add(maps, &maps, kGeometry);
  CHECK(itself.place(0)[0][0].to_teacher() == 0.0);
  // A teacher whose encoder rows put everything on the sentence's first real key: TV = 1 − 1/n.
  nn::AttentionMaps sharp = maps;
  std::vector<double> values(2 * 4 * 4, 0.0);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 4; ++i) values[size_t((b * 4 + i) * 4 + (b == 0 ? 1 : 0))] = 1.0;
  sharp.encoder_self = {from_doubles(values, {2, 1, 4, 4}, DType::Float32)};
  AttentionStatistics compared;
  compared.add(maps, &sharp, kGeometry);
  CHECK(compared.place(0)[0][0].to_teacher() == Approx((3 * (1 - 1.0 / 3) + 4 * (1 - 1.0 / 4)) / 7));
  CHECK(compared.to_json()["places"]["encoder_self"][0][0].contains("to_teacher"));

  nn::AttentionMaps other_heads = maps;
  other_heads.cross = {zeros({2, 2, 3, 4})};
  AttentionStatistics refused;
  CHECK_THROWS_WITH(refused.add(maps, &other_heads, kGeometry),
                    Catch::Contains("cross layer 1 has 1 heads in the model, 2 in the teacher"));
}

TEST_CASE("attention statistics: a NaN or infinite weight in a real row is an error naming where; in padding it is "
          "never read") {
  const double nan = std::nan("");
  AttentionStatistics padded;
  CHECK_NOTHROW(padded.add(uniform_maps(nan), nullptr, kGeometry));
  CHECK(padded.place(2)[0][0].entropy() > 0);
  for (double bad : {nan, std::numeric_limits<double>::infinity()}) {
    nn::AttentionMaps maps = uniform_maps(0.0);
    std::vector<double> cross = maps.cross[0].to_vector();
    cross[size_t(1 * 3 * 4 + 2 * 4 + 3)] = bad;  // sentence 2, query 3 (real), key 4 (real)
    maps.cross = {from_doubles(cross, {2, 1, 3, 4}, DType::Float32)};
    AttentionStatistics model, teacher;
    CHECK_THROWS_WITH(model.add(maps, nullptr, kGeometry),
                      Catch::Contains("the model produced NaN (or infinite) attention weights in cross-attention layer "
                                      "1 head 1"));
    CHECK_THROWS_WITH(teacher.add(uniform_maps(0.0), &maps, kGeometry),
                      Catch::Contains("the teacher (--compare-to) produced NaN"));
  }
}

TEST_CASE("heat-map axes of many tokens label every k-th position with its index, labels a line apart") {
  const auto tokens = [](size_t n) {
    std::vector<std::string> words;
    for (size_t i = 0; i < n; ++i) words.push_back("w" + std::to_string(i));
    return words;
  };
  CHECK(plot::axis_labels(tokens(20), 22) == tokens(20));  // full-size cells: every token
  // The cells draw_heat_map gives 120 and 1,000 tokens (1,400 px in all): every label on top of
  // the next 12-px one, and at 1,000 tokens the label areas solid black.
  for (const size_t n : {size_t(120), size_t(1000)}) {
    INFO(n << " tokens");
    const double cell = 1400.0 / double(n);
    const std::vector<std::string> labels = plot::axis_labels(tokens(n), cell);
    REQUIRE(labels.size() == n);
    std::vector<size_t> labelled;
    for (size_t i = 0; i < n; ++i)
      if (!labels[i].empty()) labelled.push_back(i);
    REQUIRE(labelled.size() > 1);
    const size_t step = labelled[1] - labelled[0];
    CHECK(labelled.front() == 0);
    CHECK(double(step) * cell >= 12);  // a line apart...
    CHECK(double(step) * cell <= 40);  // ...and not far more
    for (size_t k = 0; k < labelled.size(); ++k) {
      CHECK(labelled[k] == k * step);
      CHECK(labels[labelled[k]] == fmt::format("#{} w{}", labelled[k], labelled[k]));
    }
    const plot::HeatMap map{"t", tokens(n), tokens(n), std::vector<double>(n * n, 1.0 / double(n))};
    CHECK(plot::draw_heat_map(map)->width() < 1600);
  }
}
