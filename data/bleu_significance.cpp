// See bleu_significance.hpp. The arithmetic follows sacreBLEU 2.x's significance.py step by step.
#include "data/bleu_significance.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <fmt/core.h>

#include "data/numpy_random.hpp"
#include "data/python_statistics_mean.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

// Every system as long as the first, at least one segment, at least one row: else DataError
// naming the test.
void check_test_input(const std::vector<std::vector<BleuStats>>& segment_stats, int rows, const char* test,
                      const char* rows_name) {
  if (segment_stats.empty() || segment_stats.front().empty())
    throw DataError(fmt::format("{}: no segments to resample", test));
  if (rows < 1) throw DataError(fmt::format("{}: {} {}", test, rows, rows_name));
  const size_t n = segment_stats.front().size();
  for (const auto& system : segment_stats)
    if (system.size() != n) throw DataError(fmt::format("{}: systems of {} and {} segments", test, n, system.size()));
}

uint32_t seed_or_random(const std::optional<uint32_t>& seed) { return seed ? *seed : std::random_device{}(); }
std::string seed_name(const std::optional<uint32_t>& seed) { return seed ? std::to_string(*seed) : "none"; }

double corpus_bleu(const std::vector<BleuStats>& segments, const SacreBleuOptions& options) {
  return sacrebleu_compute(sum_stats(segments, options.max_order), options).score;
}

// The BLEU of one row of a test (a resample, a trial): the statistics segment_of(i) picks for
// i = 0 … n−1, in that order, summed and scored.
template <typename SegmentOf>
double row_bleu(size_t n, SegmentOf segment_of, const SacreBleuOptions& options, BleuStatsArithmetic arithmetic) {
  BleuStats sum(options.max_order);
  for (size_t i = 0; i < n; ++i) sum += segment_of(i);
  return sacrebleu_compute(sum, options, arithmetic).score;
}

// sacreBLEU's _compute_p_value (after multeval): the share of rows whose statistic exceeds the
// real one, each count one higher so that p is never 0: (count + 1) / (rows + 1).
double p_value(const std::vector<double>& row_statistics, double real_difference) {
  size_t exceeding = 0;
  for (double statistic : row_statistics) exceeding += statistic > real_difference;
  return double(exceeding + 1) / double(row_statistics.size() + 1);
}

// --- paired bootstrap (§3.7)

// The BLEU of every resample of one system. Each system draws the same rows: a generator seeded
// alike gives rng.choice(n, size=(samples, n), replace=True) row after row.
std::vector<double> resampled_scores(const std::vector<BleuStats>& segments, uint32_t seed, int samples,
                                     const SacreBleuOptions& options) {
  const uint32_t n = uint32_t(segments.size());
  NumpyDefaultRng rng(seed);
  const auto drawn = [&](size_t) -> const BleuStats& { return segments[rng.integer_below(n)]; };
  std::vector<double> scores;
  scores.reserve(size_t(samples));
  for (int row = 0; row < samples; ++row) scores.push_back(row_bleu(n, drawn, options, BleuStatsArithmetic::kFloat32));
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

// The bootstrap's row statistic: |system − baseline| less its mean over the rows.
double bootstrap_p_value(const std::vector<double>& system, const std::vector<double>& baseline,
                         double real_difference) {
  std::vector<double> differences(system.size());
  for (size_t i = 0; i < system.size(); ++i) differences[i] = std::abs(system[i] - baseline[i]);
  const double mean = numpy_mean(differences);
  for (double& difference : differences) difference -= mean;
  return p_value(differences, real_difference);
}

// --- approximate randomization (§3.8)

// The options the trials are scored with. sacreBLEU sums their statistics in int64 NumPy arrays
// and adds add-k's k to a count in place, which truncates c + k to an integer: for k ≥ 0 the
// trials are scored with ⌊k⌋ (the real scores, from Python integers, with k itself).
SacreBleuOptions trial_options(SacreBleuOptions options) {
  if (options.smoothing == BleuSmoothing::kAddK && options.smooth_value)
    options.smooth_value = std::floor(*options.smooth_value);
  return options;
}

// |BLEU(A) − BLEU(B)| of every trial: a drawn bit set gives segment i's baseline translation to
// pseudo-system A and the system's to B, a clear bit the other way round. The bits are one call
// default_rng(seed).integers(2, size=(trials, n), dtype=bool), read row after row.
std::vector<double> trial_differences(const std::vector<BleuStats>& baseline, const std::vector<BleuStats>& system,
                                      uint32_t seed, int trials, const SacreBleuOptions& options) {
  const size_t n = baseline.size();
  NumpyDefaultRng rng(seed);
  NumpyBoolDraws draws(rng);
  std::vector<char> baseline_to_a(n);
  std::vector<double> differences;
  differences.reserve(size_t(trials));
  for (int trial = 0; trial < trials; ++trial) {
    for (char& bit : baseline_to_a) bit = draws.next();
    const auto a = [&](size_t i) -> const BleuStats& { return baseline_to_a[i] ? baseline[i] : system[i]; };
    const auto b = [&](size_t i) -> const BleuStats& { return baseline_to_a[i] ? system[i] : baseline[i]; };
    differences.push_back(std::abs(row_bleu(n, a, options, BleuStatsArithmetic::kExact) -
                                   row_bleu(n, b, options, BleuStatsArithmetic::kExact)));
  }
  return differences;
}

}  // namespace

std::vector<SystemSignificance> paired_bootstrap(const std::vector<std::vector<BleuStats>>& segment_stats,
                                                 const SacreBleuOptions& options, const BootstrapOptions& bootstrap) {
  check_test_input(segment_stats, bootstrap.samples, "paired bootstrap", "resamples");
  const uint32_t seed = seed_or_random(bootstrap.seed);
  std::vector<double> baseline_scores;
  std::vector<SystemSignificance> results;
  for (const std::vector<BleuStats>& system : segment_stats) {
    SystemSignificance result;
    result.score = corpus_bleu(system, options);
    std::vector<double> scores = resampled_scores(system, seed, bootstrap.samples, options);
    result.confidence = estimate_interval(scores);
    if (results.empty())
      baseline_scores = std::move(scores);
    else
      result.p_value = bootstrap_p_value(scores, baseline_scores, std::abs(results.front().score - result.score));
    results.push_back(result);
  }
  return results;
}

SignificanceSignature bootstrap_signature(const BootstrapOptions& bootstrap) {
  return {"bs", bootstrap.samples, seed_name(bootstrap.seed)};
}

BleuConfidence bootstrap_confidence(const std::vector<BleuStats>& segment_stats, const SacreBleuOptions& options,
                                    const BootstrapOptions& bootstrap) {
  check_test_input({segment_stats}, bootstrap.samples, "bootstrap", "resamples");
  std::vector<double> scores =
      resampled_scores(segment_stats, seed_or_random(bootstrap.seed), bootstrap.samples, options);
  // sacreBLEU's corpus score takes its interval from the paired test's estimate_ci but its mean
  // from statistics.mean (Score.estimate_ci), which can differ from NumPy's in the last bit.
  BleuConfidence confidence = estimate_interval(scores);
  confidence.mean = python_statistics_mean(scores);
  return confidence;
}

std::vector<SystemSignificance> paired_approximate_randomization(
    const std::vector<std::vector<BleuStats>>& segment_stats, const SacreBleuOptions& options,
    const RandomizationOptions& randomization) {
  check_test_input(segment_stats, randomization.trials, "approximate randomization", "trials");
  const uint32_t seed = seed_or_random(randomization.seed);
  const SacreBleuOptions trial_scoring = trial_options(options);
  const std::vector<BleuStats>& baseline = segment_stats.front();
  std::vector<SystemSignificance> results(segment_stats.size());
  results.front().score = corpus_bleu(baseline, options);
  for (size_t s = 1; s < segment_stats.size(); ++s) {
    SystemSignificance& result = results[s];
    result.score = corpus_bleu(segment_stats[s], options);
    result.p_value = p_value(trial_differences(baseline, segment_stats[s], seed, randomization.trials, trial_scoring),
                             std::abs(results.front().score - result.score));
  }
  return results;
}

SignificanceSignature randomization_signature(const RandomizationOptions& randomization) {
  return {"ar", randomization.trials, seed_name(randomization.seed)};
}

}  // namespace attn::data
