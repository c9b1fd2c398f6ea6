// Tests of data/numpy_random and data/bleu_significance: NumPy's default_rng streams and
// pairwise sums against what NumPy 1.24 printed, and the paired bootstrap and approximate
// randomization against transcriptions of sacreBLEU 2.x's significance.py run with that NumPy
// (the bootstrap's float32 statistics cast explicitly, as NumPy 2 promotes them), on a corpus of
// eight sentences and three systems.
#include <catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "data/bleu_significance.hpp"
#include "data/numpy_random.hpp"
#include "data/python_statistics_mean.hpp"
#include "data/text_io.hpp"

using namespace attn::data;

TEST_CASE("NumpyDefaultRng draws numpy.random.default_rng's numbers", "[bleu_significance]") {
  NumpyDefaultRng raw(12345);  // default_rng(12345).bit_generator.random_raw(3)
  CHECK(raw.next_uint64() == 4193609425186963869ULL);
  CHECK(raw.next_uint64() == 5843160025838961886ULL);
  CHECK(raw.next_uint64() == 14708796524633321433ULL);
  NumpyDefaultRng zero(0);
  CHECK(zero.next_uint64() == 11749869230777074271ULL);
  CHECK(zero.next_uint64() == 4976686463289251617ULL);

  // default_rng(12345).choice(7, size=(3, 7), replace=True), row after row: sacreBLEU's draw.
  NumpyDefaultRng choice(12345);
  std::vector<uint32_t> drawn;
  for (int i = 0; i < 21; ++i) drawn.push_back(choice.integer_below(7));
  CHECK(drawn == std::vector<uint32_t>{4, 1, 5, 2, 1, 5, 4, 4, 6, 2, 5, 2, 3, 4, 1, 1, 1, 4, 4, 6, 4});
  NumpyDefaultRng largest_seed(4294967295u);  // default_rng(2**32 - 1).choice(1000, size=6)
  drawn.clear();
  for (int i = 0; i < 6; ++i) drawn.push_back(largest_seed.integer_below(1000));
  CHECK(drawn == std::vector<uint32_t>{190, 251, 724, 219, 909, 287});
}

// Each 0/1 of a string is one value of default_rng(seed).integers(2, size=…, dtype=bool).
std::string bool_draws(NumpyBoolDraws& draws, size_t count) {
  std::string bits;
  for (size_t i = 0; i < count; ++i) bits.push_back(draws.next() ? '1' : '0');
  return bits;
}

TEST_CASE("NumpyBoolDraws draws Generator.integers(2, dtype=bool)'s values", "[bleu_significance]") {
  // ''.join('1' if b else '0' for b in default_rng(12345).integers(2, size=(3, 25), dtype=bool).ravel()):
  // the bits of the first 32-bit draw, lowest first, then of the next; rows do not start afresh.
  NumpyDefaultRng rng(12345);
  NumpyBoolDraws draws(rng);
  CHECK(bool_draws(draws, 75) ==
        "101110011000001111111111010011011011000110001101010011000101110001111011001");
  // rng = default_rng(7); rng.integers(2, size=5, dtype=bool); rng.integers(2, size=40, dtype=bool);
  // rng.integers(0, 7, size=4): each call starts a fresh 32-bit draw (the second one the high half
  // of the first 64-bit output), and the generator goes on after the bits used.
  NumpyDefaultRng seven(7);
  NumpyBoolDraws first_call(seven);
  CHECK(bool_draws(first_call, 5) == "11010");
  NumpyBoolDraws second_call(seven);
  CHECK(bool_draws(second_call, 40) == "1001010110000010011000000000010110101001");
  std::vector<uint32_t> drawn;
  for (int i = 0; i < 4; ++i) drawn.push_back(seven.integer_below(7));
  CHECK(drawn == std::vector<uint32_t>{6, 4, 5, 5});
}

TEST_CASE("numpy_pairwise_sum rounds as np.sum", "[bleu_significance]") {
  std::vector<double> harmonic;
  for (int i = 1; i <= 1000; ++i) harmonic.push_back(1.0 / i);
  CHECK(numpy_pairwise_sum(harmonic) == 0x1.df11f45f4e61ap+2);  // np.sum; a plain loop gives ...618p+2
  double loop = 0;
  for (double v : harmonic) loop += v;
  CHECK(loop == 0x1.df11f45f4e618p+2);
  CHECK(numpy_pairwise_sum(std::vector<double>{}) == 0.0);
}

namespace {

const std::vector<std::string> kReferences = {
    "the cat sat on the mat",         "a dog ran in the park today",          "we will meet again tomorrow morning",
    "this is a small test of bleu",   "the house is red and the door is blue", "she reads a book every night",
    "rain is expected later this week", "he says one thing then another"};

std::vector<BleuStats> stats_of(const std::vector<std::string>& hypotheses, const SacreBleuOptions& options) {
  std::vector<BleuStats> stats;
  for (size_t i = 0; i < hypotheses.size(); ++i)
    stats.push_back(sacrebleu_segment_stats(hypotheses[i], {kReferences[i]}, options));
  return stats;
}

// A baseline, a better system and a much worse one, with the given options.
std::vector<std::vector<BleuStats>> three_systems(const SacreBleuOptions& options) {
  return {
      stats_of({"the cat sat on a mat", "a dog runs in the park", "we meet again tomorrow", "this is a test of bleu",
                "the house is red the door is blue", "she reads books every night", "rain expected this week",
                "he says one thing then other"},
               options),
      stats_of({"the cat sat on the mat", "a dog ran in the park", "we will meet tomorrow morning",
                "this is a small test", "the house is red and the door blue", "she reads a book at night",
                "rain is expected this week", "he says a thing then another"},
               options),
      stats_of({"cat on mat", "dog park", "meet tomorrow", "small test", "red house blue door", "she reads",
                "rain this week", "he says things"},
               options)};
}

}  // namespace

TEST_CASE("paired_bootstrap reproduces sacreBLEU's paired bootstrap test", "[bleu_significance]") {
  SacreBleuOptions options;
  options.tokenizer = BleuTokenizer::kNone;
  const std::vector<std::vector<BleuStats>> systems = three_systems(options);
  const std::vector<SystemSignificance> results = paired_bootstrap(systems, options, {.samples = 1000, .seed = 12345});
  REQUIRE(results.size() == 3);
  CHECK(results[0].score == 0x1.5310bf77b5e1dp+5);  // 42.38
  CHECK(results[0].confidence->mean == 0x1.4abb85fd88dbap+5);  // 41.34
  CHECK(results[0].confidence->ci == 0x1.10bb6cd9d33b4p+4);    // 17.05
  CHECK_FALSE(results[0].p_value);
  CHECK(results[1].score == 0x1.04ba2d3d6a53bp+6);  // 65.18
  CHECK(results[1].confidence->mean == 0x1.03964a62c2872p+6);
  CHECK(results[1].confidence->ci == 0x1.ed9a349343800p+3);
  CHECK(results[1].p_value == 9.0 / 1001);
  CHECK(results[2].score == 0x1.97f513bf2db97p+2);  // 6.37
  CHECK(results[2].confidence->mean == 0x1.f71c849c645e1p+1);
  CHECK(results[2].confidence->ci == 0x1.eddb4d7e24a5ap+1);
  CHECK(results[2].p_value == 1.0 / 1001);  // no resample reverses a drop of 36 BLEU

  // The same seed gives the same resamples; another seed other ones.
  CHECK(paired_bootstrap(systems, options, {.samples = 1000, .seed = 12345})[1].confidence->mean ==
        results[1].confidence->mean);
  CHECK(paired_bootstrap(systems, options, {.samples = 1000, .seed = 7})[1].confidence->mean !=
        results[1].confidence->mean);
  // One system alone: the baseline's estimate.
  const BleuConfidence alone = bootstrap_confidence(systems[0], options, {.samples = 1000, .seed = 12345});
  CHECK(alone.mean == results[0].confidence->mean);
  CHECK(alone.ci == results[0].confidence->ci);
}

// Expected: sacreBLEU 2.6.0's BLEU(tokenize='none').corpus_score(hypotheses, [references],
// n_bootstrap=N) on the corpus above (NumPy 1.24.2 with NumPy 2's promotion, 'weak'): its mean is
// Python's statistics.mean of the resampled scores, here one ulp from NumPy's mean that the paired
// test takes (results[2].confidence->mean above is ...45e1p+1).
TEST_CASE("bootstrap_confidence averages as sacreBLEU's --confidence does", "[bleu_significance]") {
  SacreBleuOptions options;
  options.tokenizer = BleuTokenizer::kNone;
  const std::vector<std::vector<BleuStats>> systems = three_systems(options);
  const BleuConfidence worse = bootstrap_confidence(systems[2], options, {.samples = 1000, .seed = 12345});
  CHECK(worse.mean == 0x1.f71c849c645e2p+1);
  CHECK(worse.ci == 0x1.eddb4d7e24a5ap+1);
  const BleuConfidence better = bootstrap_confidence(systems[1], options, {.samples = 41, .seed = 12345});
  CHECK(better.mean == 0x1.fb9232b9d2c47p+5);  // NumPy's mean: ...2c48p+5
  CHECK(better.ci == 0x1.16c16e78f1af9p+4);
}

TEST_CASE("python_statistics_mean rounds the exact mean once", "[bleu_significance]") {
  CHECK(python_statistics_mean({0.1, 0.2, 0.3}) == 0.2);  // summed in order and divided: 0.20000000000000004
  CHECK(python_statistics_mean({5e-324, 0.0}) == 0.0);    // half the smallest double: a tie, to even
  CHECK(python_statistics_mean({5e-324, 5e-324, 5e-324, 0.0}) == 5e-324);
  CHECK(python_statistics_mean({1.7976931348623157e308, 1.7976931348623157e308}) == 1.7976931348623157e308);
  CHECK(python_statistics_mean({-1.0, -2.0}) == -1.5);
  CHECK_THROWS_AS(python_statistics_mean({}), DataError);
  CHECK_THROWS_AS(python_statistics_mean({1.0, -1.0}), DataError);
}

TEST_CASE("paired_bootstrap refuses systems of different lengths and empty input", "[bleu_significance]") {
  SacreBleuOptions options;
  const std::vector<BleuStats> two = stats_of({"the cat", "a dog"}, options);
  const std::vector<BleuStats> one = stats_of({"the cat"}, options);
  CHECK_THROWS_WITH(paired_bootstrap({two, one}, options, {}), "paired bootstrap: systems of 2 and 1 segments");
  CHECK_THROWS_WITH(paired_bootstrap({}, options, {}), "paired bootstrap: no segments to resample");
  CHECK_THROWS_WITH(paired_bootstrap({two, two}, options, {.samples = 0}), "paired bootstrap: 0 resamples");
}

TEST_CASE("the signature of a paired bootstrap names its resamples and seed after nrefs", "[bleu_significance]") {
  const SacreBleuOptions options;
  CHECK(sacrebleu_signature(options, 1, false, SignificanceSignature{"bs", 1000, "12345"}) ==
        "nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  CHECK(sacrebleu_signature(options, 2, true, SignificanceSignature{"bs", 100, "none"}) ==
        "#:2|bs:100|rs:none|c:mixed|e:no|tok:13a|s:exp|v:2.6.0");
}

TEST_CASE("format_sacrebleu_score prints a confidence as sacreBLEU's --confidence does", "[bleu_significance]") {
  BleuScore score;
  score.score = 8.4528;
  score.bp = 0.987;
  score.ratio = 0.987;
  score.precisions = {41.0, 13.2, 5.1, 1.9};
  score.sys_len = 9064;
  score.ref_len = 9180;
  CHECK(format_sacrebleu_score(score, "nrefs:1", 1, BleuConfidence{8.4412, 0.9049}) ==
        "BLEU|nrefs:1 = 8.5 (μ = 8.4 ± 0.9) 41.0/13.2/5.1/1.9 "
        "(BP = 0.987 ratio = 0.987 hyp_len = 9064 ref_len = 9180)");
  CHECK(format_sacrebleu_score(score, "", 2, BleuConfidence{0.0, 0.0}).starts_with("BLEU = 8.45 41.0/"));  // mean 0
}

// The p-values below are those of a transcription of sacreBLEU 2.x's _paired_ar_test (with
// BLEU.compute_bleu and sum_of_lists as sacreBLEU has them, tokenize none) run with NumPy 1.24.2 on
// the corpus above: (count + 1) / (trials + 1), the counts as it printed them.
TEST_CASE("paired_approximate_randomization reproduces sacreBLEU's approximate randomization test",
          "[bleu_significance]") {
  SacreBleuOptions options;
  options.tokenizer = BleuTokenizer::kNone;
  const std::vector<std::vector<BleuStats>> systems = three_systems(options);
  const std::vector<SystemSignificance> results =
      paired_approximate_randomization(systems, options, {.trials = 1000, .seed = 12345});
  REQUIRE(results.size() == 3);
  // The corpus scores are the bootstrap's; no mean or interval.
  CHECK(results[0].score == 0x1.5310bf77b5e1dp+5);
  CHECK(results[1].score == 0x1.04ba2d3d6a53bp+6);
  CHECK(results[2].score == 0x1.97f513bf2db97p+2);
  for (const SystemSignificance& result : results) CHECK_FALSE(result.confidence);
  CHECK_FALSE(results[0].p_value);
  CHECK(results[1].p_value == 82.0 / 1001);  // 81 trials differ by more than 22.80: (p = 0.0819)
  CHECK(results[2].p_value == 3.0 / 1001);   // 2 trials: (p = 0.0030)*

  const std::vector<SystemSignificance> sacrebleu_default =
      paired_approximate_randomization(systems, options, {});  // 10,000 trials, seed 12345
  CHECK(sacrebleu_default[1].p_value == 872.0 / 10001);
  CHECK(sacrebleu_default[2].p_value == 69.0 / 10001);
  const std::vector<SystemSignificance> seven =
      paired_approximate_randomization(systems, options, {.trials = 1000, .seed = 7});
  CHECK(seven[1].p_value == 87.0 / 1001);
  CHECK(seven[2].p_value == 4.0 / 1001);
}

TEST_CASE("paired_approximate_randomization scores add-k trials with sacreBLEU's integer k", "[bleu_significance]") {
  // sacreBLEU adds k to the trials' int64 counts in place, which truncates: k = 0.5 adds nothing
  // there, while the corpus scores get 0.5 (transcription as above, smooth_method='add-k').
  SacreBleuOptions options;
  options.tokenizer = BleuTokenizer::kNone;
  options.smoothing = BleuSmoothing::kAddK;
  options.smooth_value = 0.5;
  std::vector<SystemSignificance> results =
      paired_approximate_randomization(three_systems(options), options, {.trials = 1000, .seed = 12345});
  CHECK(results[0].score == 0x1.5b8b8a086b212p+5);
  CHECK(results[1].score == 0x1.06765529014f3p+6);
  CHECK(results[2].score == 0x1.b4b56957c2588p+2);
  CHECK(results[1].p_value == 94.0 / 1001);
  CHECK(results[2].p_value == 159.0 / 1001);
  options.smooth_value.reset();  // k = 1
  results = paired_approximate_randomization(three_systems(options), options, {.trials = 1000, .seed = 12345});
  CHECK(results[0].score == 0x1.636e85954b724p+5);
  CHECK(results[1].p_value == 73.0 / 1001);
  CHECK(results[2].p_value == 3.0 / 1001);
}

TEST_CASE("paired_approximate_randomization refuses what the bootstrap refuses", "[bleu_significance]") {
  SacreBleuOptions options;
  const std::vector<BleuStats> two = stats_of({"the cat", "a dog"}, options);
  const std::vector<BleuStats> one = stats_of({"the cat"}, options);
  CHECK_THROWS_WITH(paired_approximate_randomization({two, one}, options, {}),
                    "approximate randomization: systems of 2 and 1 segments");
  CHECK_THROWS_WITH(paired_approximate_randomization({}, options, {}),
                    "approximate randomization: no segments to resample");
  CHECK_THROWS_WITH(paired_approximate_randomization({two, two}, options, {.trials = 0}),
                    "approximate randomization: 0 trials");
  // A system against itself: no trial's difference exceeds the real difference 0, so p is the
  // smallest the trials allow, as sacreBLEU's strict `>` gives (transcription: 0.01).
  CHECK(paired_approximate_randomization({two, two}, options, {.trials = 99})[1].p_value == 0.01);
}

TEST_CASE("the signature of an approximate randomization test names its trials and seed", "[bleu_significance]") {
  const SacreBleuOptions options;
  CHECK(sacrebleu_signature(options, 1, false, randomization_signature({})) ==
        "nrefs:1|ar:10000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  CHECK(sacrebleu_signature(options, 2, true, randomization_signature({.trials = 500, .seed = std::nullopt})) ==
        "#:2|ar:500|rs:none|c:mixed|e:no|tok:13a|s:exp|v:2.6.0");
}
