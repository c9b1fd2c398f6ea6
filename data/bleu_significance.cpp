// See bleu_significance.hpp. The arithmetic follows sacreBLEU 2.x's significance.py step by step.
#include "data/bleu_significance.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <fmt/format.h>

#include "data/numpy_random.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

// The BLEU of every resample of one system. Each system draws the same rows: a generator seeded
// alike gives rng.choice(n, size=(samples, n), replace=True) row after row.
std::vector<double> resampled_scores(const std::vector<BleuStats>& segments, uint32_t seed, int samples,
                                     const SacreBleuOptions& options) {
  const uint32_t n = uint32_t(segments.size());
  NumpyDefaultRng rng(seed);
  std::vector<double> scores;
  scores.reserve(size_t(samples));
  for (int row = 0; row < samples; ++row) {
    BleuStats sum(options.max_order);
    for (uint32_t i = 0; i < n; ++i) sum += segments[rng.integer_below(n)];
    scores.push_back(sacrebleu_compute(sum, options, BleuStatsArithmetic::kFloat32).score);
  }
  return scores;
}

double numpy_mean(const std::vector<double>& values) { return numpy_pairwise_sum(values) / double(values.size()); }

// sacreBLEU's estimate_ci: the mean of the sorted scores and half the spread between the
// (n/40)-th lowest and highest.
BleuConfidence estimate_interval(std::vector<double> scores) {
  std::sort(scores.begin(), scores.end());
  const size_t lower = scores.size() / 40, upper = scores.size() - lower - 1;
  return {.mean = numpy_mean(scores), .ci = 0.5 * (scores[upper] - scores[lower])};
}

double p_value(const std::vector<double>& system, const std::vector<double>& baseline, double real_difference) {
  std::vector<double> differences(system.size());
  for (size_t i = 0; i < system.size(); ++i) differences[i] = std::abs(system[i] - baseline[i]);
  const double mean = numpy_mean(differences);
  size_t exceeding = 0;
  for (double difference : differences) exceeding += (difference - mean) > real_difference;
  return double(exceeding + 1) / double(differences.size() + 1);
}

}  // namespace

std::vector<SystemSignificance> paired_bootstrap(const std::vector<std::vector<BleuStats>>& segment_stats,
                                                 const SacreBleuOptions& options, const BootstrapOptions& bootstrap) {
  if (segment_stats.empty() || segment_stats.front().empty())
    throw DataError("paired bootstrap: no segments to resample");
  if (bootstrap.samples < 1) throw DataError(fmt::format("paired bootstrap: {} resamples", bootstrap.samples));
  const size_t n = segment_stats.front().size();
  for (const auto& system : segment_stats)
    if (system.size() != n)
      throw DataError(fmt::format("paired bootstrap: systems of {} and {} segments", n, system.size()));

  const uint32_t seed = bootstrap.seed ? *bootstrap.seed : std::random_device{}();
  std::vector<double> baseline_scores;
  std::vector<SystemSignificance> results;
  for (const std::vector<BleuStats>& system : segment_stats) {
    SystemSignificance result;
    result.score = sacrebleu_compute(sum_stats(system, options.max_order), options).score;
    std::vector<double> scores = resampled_scores(system, seed, bootstrap.samples, options);
    result.confidence = estimate_interval(scores);
    if (results.empty())
      baseline_scores = std::move(scores);
    else
      result.p_value = p_value(scores, baseline_scores, std::abs(results.front().score - result.score));
    results.push_back(result);
  }
  return results;
}

BootstrapSignature bootstrap_signature(const BootstrapOptions& bootstrap) {
  return {bootstrap.samples, bootstrap.seed ? std::to_string(*bootstrap.seed) : "none"};
}

BleuConfidence bootstrap_confidence(const std::vector<BleuStats>& segment_stats, const SacreBleuOptions& options,
                                    const BootstrapOptions& bootstrap) {
  return paired_bootstrap({segment_stats}, options, bootstrap).front().confidence;
}

}  // namespace attn::data
