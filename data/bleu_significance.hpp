// sacreBLEU's paired significance tests (`sacrebleu REF -i BASELINE SYSTEM… --paired-bs` or
// `--paired-ar`), step by step as sacreBLEU 2.x takes them: is a system's BLEU different from a
// baseline's by more than chance explains?
//
// Paired bootstrap resampling (Koehn 2004; docs/mt-tools.md §3.7): one matrix of indices,
// `samples` rows of n segment numbers drawn with replacement by NumPy's default_rng(seed)
// (data/numpy_random.hpp), resamples every system the same way (drawn again for each system from
// the same seed rather than stored). For each row, each system's BLEU is recomputed from the
// summed statistics of the drawn segments (float32 sums, data/bleu.hpp). A system's mean and 95%
// interval come from its resampled scores (sorted; the interval is half the distance between the
// n/40-th score from either end). The p-value against the baseline counts the rows whose
// |system − baseline| exceeds its mean over the rows by more than the real difference:
// p = (count + 1) / (samples + 1).
//
// Paired approximate randomization (Riezler and Maxwell 2005; docs/mt-tools.md §3.8): each of
// `trials` rows of n coin flips (NumPy's integers(2, dtype=bool) from default_rng(seed), the same
// rows for every system) swaps the baseline's and the system's translation of the segments it
// marks. The p-value counts the trials whose |BLEU(one pseudo-system) − BLEU(the other)|
// exceeds the real difference: p = (count + 1) / (trials + 1). No mean or interval.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/bleu.hpp"

namespace attn::data {

struct BootstrapOptions {
  int samples = 1000;              // sacreBLEU's --paired-bs-n
  std::optional<uint32_t> seed = 12345;  // SACREBLEU_SEED; nothing: a seed from the OS
};

struct RandomizationOptions {
  int trials = 10000;                    // sacreBLEU's --paired-ar-n
  std::optional<uint32_t> seed = 12345;  // SACREBLEU_SEED; nothing: a seed from the OS
};

struct SystemSignificance {
  double score = 0;                          // corpus BLEU of all segments
  std::optional<BleuConfidence> confidence;  // bootstrap only: mean and half-width of the 95% interval
  std::optional<double> p_value;             // against the baseline; none for the baseline itself
};

// segment_stats[s][i]: the statistics of system s's hypothesis i (sacrebleu_segment_stats);
// system 0 is the baseline. Every system needs the same number of segments (at least one).
std::vector<SystemSignificance> paired_bootstrap(const std::vector<std::vector<BleuStats>>& segment_stats,
                                                 const SacreBleuOptions& options, const BootstrapOptions& bootstrap);

// The signature entries of a bootstrap with these options (`none` for a seed from the OS).
SignificanceSignature bootstrap_signature(const BootstrapOptions& bootstrap);

// One system's resampled estimate (sacreBLEU's --confidence): the resamples of the baseline of
// paired_bootstrap, but averaged as Python's statistics.mean averages (exactly, rounded once),
// where the paired test takes NumPy's mean.
BleuConfidence bootstrap_confidence(const std::vector<BleuStats>& segment_stats, const SacreBleuOptions& options,
                                    const BootstrapOptions& bootstrap);

// The same systems as paired_bootstrap takes, compared by approximate randomization.
std::vector<SystemSignificance> paired_approximate_randomization(
    const std::vector<std::vector<BleuStats>>& segment_stats, const SacreBleuOptions& options,
    const RandomizationOptions& randomization);

// The signature entries of approximate randomization with these options: `ar:10000|seed:12345`.
SignificanceSignature randomization_signature(const RandomizationOptions& randomization);

}  // namespace attn::data
