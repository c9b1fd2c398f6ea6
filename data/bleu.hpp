// BLEU (Papineni et al. 2002) as three reference tools compute it, to their printed digits
// (docs/mt-tools.md §3, docs/models.md §1.12):
//
//   sacreBLEU 2.x (§3.2)   corpus and sentence BLEU, tokenizers 13a/intl/char/none,
//                          smoothing exp/floor/add-k/none, effective order, signature;
//   multi-bleu.perl (§3.1) tokenized, whitespace-split bytes, `-lc` = ASCII lower-casing;
//   fairseq-score (§3.4)   libbleu: every line gets `</s>` (an empty line counts 1 token),
//                          reference `<unk>` never matches, one reference.
//
// All three share the sufficient statistics: for n = 1..N, correct[n] = Σ_segments Σ_ngram
// min(count_hyp, max over references count_ref) and total[n] = #hyp n-grams; sys_len = Σ
// hypothesis lengths; ref_len = Σ closest reference length (ties → the shorter reference).
// Then p_n = correct[n]/total[n], BP = exp(1 − ref_len/sys_len) if sys_len < ref_len else 1,
// BLEU = BP · exp(Σ log p_n / N). Each tool evaluates that in its own floating-point order,
// which is reproduced here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/bleu_tokenizers.hpp"

namespace attn::data {

// The sacreBLEU version whose output (and signature) this file reproduces.
inline constexpr std::string_view kSacreBleuVersion = "2.6.0";

// Sufficient statistics of one segment or of a whole corpus (element-wise sums).
struct BleuStats {
  int64_t sys_len = 0, ref_len = 0;
  std::vector<int64_t> correct, total;  // index n-1 for n-grams of order n

  explicit BleuStats(int max_order = 4) : correct(size_t(max_order), 0), total(size_t(max_order), 0) {}
  BleuStats& operator+=(const BleuStats& other);
};

// Statistics of one hypothesis against its references, all already split into tokens.
// With no references the reference length is 0 and nothing matches.
BleuStats segment_stats(const std::vector<std::string_view>& hypothesis,
                        const std::vector<std::vector<std::string_view>>& references, int max_order = 4);

// A BLEU result. score and precisions are percentages; counts/totals are the statistics
// the score was computed from (sacreBLEU's add-k adds k to them, so they are doubles).
struct BleuScore {
  double score = 0, bp = 0, ratio = 0;
  std::vector<double> precisions, counts, totals;
  int64_t sys_len = 0, ref_len = 0;
};

// ---------------------------------------------------------------------------- sacreBLEU

enum class BleuSmoothing { kNone, kFloor, kAddK, kExp };

// "none" | "floor" | "add-k" | "exp"; anything else throws DataError.
BleuSmoothing parse_bleu_smoothing(std::string_view name);
std::string_view bleu_smoothing_name(BleuSmoothing smoothing);

struct SacreBleuOptions {
  BleuTokenizer tokenizer = BleuTokenizer::k13a;
  bool lowercase = false;
  BleuSmoothing smoothing = BleuSmoothing::kExp;
  std::optional<double> smooth_value;  // floor: 0.1, add-k: 1 when unset
  bool effective_order = false;        // sacreBLEU's sentence BLEU turns it on
  int max_order = 4;
};

// One segment as sacreBLEU sees it before splitting: lower() if asked, rstrip(), tokenize.
std::string sacrebleu_preprocess(std::string_view segment, const SacreBleuOptions& options);

// How sacreBLEU holds the statistics it scores: Python integers for corpus and sentence BLEU
// (kExact); float32 NumPy sums for the resamples of its significance tests (kFloat32), where,
// under NumPy 2's promotion rules, each n-gram precision is computed and rounded in float32.
enum class BleuStatsArithmetic { kExact, kFloat32 };

// sacreBLEU's compute_bleu() on aggregated statistics (smoothing, effective order; the
// add-k value is added to counts/totals of orders ≥ 2 as sacreBLEU does).
BleuScore sacrebleu_compute(const BleuStats& stats, const SacreBleuOptions& options,
                            BleuStatsArithmetic arithmetic = BleuStatsArithmetic::kExact);

// Statistics of one segment through sacreBLEU's pipeline (preprocess, split on PyWS, count).
BleuStats sacrebleu_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                                  const SacreBleuOptions& options);

// Every segment's statistics of hypotheses against one or more reference streams (each as long
// as the hypotheses, else DataError naming the counts).
std::vector<BleuStats> sacrebleu_segments_stats(const std::vector<std::string>& hypotheses,
                                                const std::vector<std::vector<std::string>>& reference_streams,
                                                const SacreBleuOptions& options);
// The corpus statistics: the element-wise sum of the segments'.
BleuStats sum_stats(const std::vector<BleuStats>& segments, int max_order);
// Corpus BLEU of hypotheses against one or more reference streams (each as long as the
// hypotheses, else DataError naming the counts).
BleuScore sacrebleu_corpus_score(const std::vector<std::string>& hypotheses,
                                 const std::vector<std::vector<std::string>>& reference_streams,
                                 const SacreBleuOptions& options);
// BLEU of one hypothesis against its references.
BleuScore sacrebleu_sentence_score(std::string_view hypothesis, const std::vector<std::string>& references,
                                   const SacreBleuOptions& options);

// A significance test's entries in the signature: `bs:1000|seed:12345` for a paired bootstrap of
// 1,000 resamples, `ar:10000|seed:12345` for approximate randomization of 10,000 trials (short
// `rs:` for the seed).
struct SignificanceSignature {
  std::string test = "bs";  // "bs" or "ar"
  int samples = 1000;       // resamples or trials
  std::string seed = "12345";  // or "none"
};

// `nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0`, or the short form
// `#:1|c:mixed|e:no|tok:13a|s:exp|v:2.6.0`; with a significance test
// `nrefs:1|bs:1000|seed:12345|case:mixed|…`.
std::string sacrebleu_signature(const SacreBleuOptions& options, int num_references, bool short_form = false,
                                const std::optional<SignificanceSignature>& test = std::nullopt);
// A bootstrap estimate of a score (data/bleu_significance.hpp): the mean over the resamples and
// the half-width of their 95% interval.
struct BleuConfidence {
  double mean = 0, ci = 0;
};

// `BLEU|{signature} = {score:.{width}f} p1/p2/p3/p4 (BP = … ratio = … hyp_len = … ref_len = …)`;
// the API prints width 2, the sacreBLEU command line width 1. With a confidence whose mean is
// positive, ` (μ = {mean} ± {ci})` follows the score, as sacreBLEU's --confidence prints it.
std::string format_sacrebleu_score(const BleuScore& score, std::string_view signature, int width = 2,
                                   const std::optional<BleuConfidence>& confidence = std::nullopt);
// The score alone as sacreBLEU's --score-only prints it: `{score:.{width}f}`, with
// ` (μ = {mean} ± {ci})` for a confidence whose mean is positive.
std::string format_sacrebleu_score_only(const BleuScore& score, int width,
                                        const std::optional<BleuConfidence>& confidence = std::nullopt);
// sacreBLEU's JSON of one score (its command line's default output): name, score rounded to
// `width` decimals, the signature, the confidence fields when there is one, the verbose part of
// the text line, then each `key:value` of the (long-form) signature, indented by one space.
std::string format_sacrebleu_json(const BleuScore& score, std::string_view signature, int width,
                                  const std::optional<BleuConfidence>& confidence = std::nullopt);

// ---------------------------------------------------------------------- multi-bleu.perl

// Statistics the way multi-bleu.perl gathers them: bytes split on ASCII whitespace,
// `lowercase` = Perl lc (A–Z only). Reference streams must match the hypotheses in length.
// A sentence whose references all differ from it by more than 9999 tokens gets reference
// length 9999, multi-bleu.perl's starting value.
BleuStats multibleu_stats(const std::vector<std::string>& hypotheses,
                          const std::vector<std::vector<std::string>>& reference_streams, bool lowercase);
// multi-bleu.perl's arithmetic (no smoothing). An empty hypothesis side with a non-empty
// reference (Perl dies dividing by zero) or a total reference length of 0 throw DataError.
BleuScore multibleu_compute(const BleuStats& stats);
// `BLEU = 56.76, 82.8/64.5/54.9/48.9 (BP=0.923, ratio=0.926, hyp_len=2576, ref_len=2783)`
std::string format_multibleu_score(const BleuScore& score);

// ------------------------------------------------------------------------ fairseq-score

// Statistics of fairseq-score (libbleu) with one reference: `ignore_case` = Python lower().
BleuStats fairseq_stats(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
                        bool ignore_case);
// The same per line.
std::vector<BleuStats> fairseq_sentence_stats(const std::vector<std::string>& hypotheses,
                                              const std::vector<std::string>& references, bool ignore_case);
// A line's statistics as fairseq-score --sentence-bleu counts them: the 2- to 4-gram matches and
// counts from 1, not 0 (libbleu's bleu_one_init; unigrams and lengths from 0).
BleuStats fairseq_one_initialized(BleuStats stats);
// libbleu/score.py arithmetic over the first `order` (1 to 4, fairseq-score -o) precisions. No
// hypothesis or no reference tokens throw DataError.
BleuScore fairseq_compute(const BleuStats& stats, int order = 4);
// `BLEU4 = 58.41, 84.3/68.2/58.1/52.5 (BP=0.902, ratio=0.907, syslen=2947, reflen=3250)`; the
// order is the number of precisions.
std::string format_fairseq_score(const BleuScore& score);

}  // namespace attn::data
