// BLEU statistics and the sacreBLEU / multi-bleu.perl / fairseq-score arithmetic and output
// lines; see bleu.hpp and docs/mt-tools.md §3.
#include "data/bleu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <unordered_map>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "data/reference_streams.hpp"
#include "data/sacrebleu_output.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

using Tokens = std::vector<std::string_view>;

// An n-gram: `order` consecutive tokens starting at `first`, compared by content (no copy).
struct Ngram {
  const std::string_view* first;
  size_t order;
};
struct NgramHash {
  size_t operator()(const Ngram& ngram) const {
    size_t hash = ngram.order;
    for (size_t k = 0; k < ngram.order; ++k) hash = hash * 1000003u ^ std::hash<std::string_view>{}(ngram.first[k]);
    return hash;
  }
};
struct NgramEqual {
  bool operator()(const Ngram& a, const Ngram& b) const {
    return a.order == b.order && std::equal(a.first, a.first + a.order, b.first);
  }
};
// Counts of n-grams of every order; keys point into the token vector they were counted in.
using NgramCounts = std::unordered_map<Ngram, int64_t, NgramHash, NgramEqual>;

NgramCounts count_ngrams(const Tokens& tokens, size_t max_order) {
  NgramCounts counts;
  for (size_t order = 1; order <= max_order; ++order)
    for (size_t start = 0; start + order <= tokens.size(); ++start) ++counts[Ngram{tokens.data() + start, order}];
  return counts;
}

// The reference length closest to the hypothesis length; ties go to the shorter reference
// (sacreBLEU _get_closest_ref_len, multi-bleu.perl). multi-bleu.perl's search starts from a
// length `start` at distance `start` (9999), as if every sentence had one more reference that far
// away: a hypothesis whose references all differ from it by more than that gets `start`.
int64_t closest_reference_length(int64_t hyp_len, const std::vector<std::vector<std::string_view>>& references,
                                 std::optional<int64_t> start = std::nullopt) {
  int64_t best_len = start.value_or(0), best_diff = start.value_or(-1);
  for (const Tokens& reference : references) {
    int64_t len = int64_t(reference.size()), diff = std::llabs(hyp_len - len);
    if (best_diff < 0 || diff < best_diff || (diff == best_diff && len < best_len)) {
      best_diff = diff;
      best_len = len;
    }
  }
  return best_len;
}

constexpr int64_t kMultiBleuFarthestLength = 9999;  // multi-bleu.perl's starting closest length

// Python's my_log / Perl's my_log in sacreBLEU and multi-bleu.perl: log(0) is −9999999999.
double log_or_floor(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// printf("%.*f") — glibc rounds the exact binary value as Python's format and Perl's printf do.

double default_smooth_value(BleuSmoothing smoothing) { return smoothing == BleuSmoothing::kAddK ? 1.0 : 0.1; }

bool smoothing_has_value(BleuSmoothing smoothing) {
  return smoothing == BleuSmoothing::kFloor || smoothing == BleuSmoothing::kAddK;
}

// Precisions correct/total of every order as fractions (0 where total is 0), as
// multi-bleu.perl and fairseq compute them.
std::vector<double> fractions(const BleuStats& stats) {
  std::vector<double> p(stats.total.size(), 0.0);
  for (size_t n = 0; n < p.size(); ++n)
    if (stats.total[n] > 0) p[n] = double(stats.correct[n]) / double(stats.total[n]);
  return p;
}

// The one-line 4-gram report multi-bleu.perl and fairseq-score both print, with their own
// labels: "<bleu> = S, p1/p2/p3/p4 (BP=…, ratio=…, <sys_len>=…, <ref_len>=…)".
std::string format_bleu4_line(const BleuScore& score, std::string_view bleu, std::string_view sys_len,
                              std::string_view ref_len) {
  return fmt::format("{} = {}, {}/{}/{}/{} (BP={}, ratio={}, {}={}, {}={})", bleu, fixed_decimals(score.score, 2),
                     fixed_decimals(score.precisions[0], 1), fixed_decimals(score.precisions[1], 1), fixed_decimals(score.precisions[2], 1),
                     fixed_decimals(score.precisions[3], 1), fixed_decimals(score.bp, 3), fixed_decimals(score.ratio, 3), sys_len, score.sys_len,
                     ref_len, score.ref_len);
}

BleuScore score_skeleton(const BleuStats& stats) {
  BleuScore score;
  score.sys_len = stats.sys_len;
  score.ref_len = stats.ref_len;
  score.counts.assign(stats.correct.begin(), stats.correct.end());
  score.totals.assign(stats.total.begin(), stats.total.end());
  score.ratio = stats.ref_len > 0 ? double(stats.sys_len) / double(stats.ref_len) : 0.0;
  return score;
}

// fairseq Dictionary.encode_line + libbleu bleu_trim on one line: PyWS tokens plus `</s>`;
// leading `<pad>` removed, trailing `</s>`/`<pad>` removed but never the first token (so an
// empty line is the one token `</s>`). A reference `<unk>` becomes a token no hypothesis
// token can equal (libbleu maps it to id −999).
Tokens fairseq_tokens(std::string_view line, bool is_reference) {
  static constexpr std::string_view kEos = "</s>", kPad = "<pad>", kUnk = "<unk>", kNeverMatches = "\n<unk>";
  Tokens tokens = split_python_whitespace(line);
  tokens.push_back(kEos);
  size_t leading_pads = 0;
  while (tokens[leading_pads] == kPad) ++leading_pads;
  tokens.erase(tokens.begin(), tokens.begin() + std::ptrdiff_t(leading_pads));
  while (tokens.size() > 1 && (tokens.back() == kEos || tokens.back() == kPad)) tokens.pop_back();
  if (is_reference)
    for (std::string_view& token : tokens)
      if (token == kUnk) token = kNeverMatches;
  return tokens;
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  if (other.correct.size() != correct.size())
    throw DataError(fmt::format("BLEU: cannot add statistics of max order {} to max order {}", other.correct.size(),
                                correct.size()));
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  for (size_t n = 0; n < correct.size(); ++n) {
    correct[n] += other.correct[n];
    total[n] += other.total[n];
  }
  return *this;
}

BleuStats segment_stats(const Tokens& hypothesis, const std::vector<Tokens>& references, int max_order) {
  if (max_order < 1) throw DataError(fmt::format("BLEU: max n-gram order must be at least 1, got {}", max_order));
  BleuStats stats(max_order);
  stats.sys_len = int64_t(hypothesis.size());
  stats.ref_len = closest_reference_length(stats.sys_len, references);
  NgramCounts reference_max;
  for (const Tokens& reference : references)
    for (const auto& [ngram, count] : count_ngrams(reference, size_t(max_order))) {
      int64_t& best = reference_max[ngram];
      best = std::max(best, count);
    }
  for (const auto& [ngram, count] : count_ngrams(hypothesis, size_t(max_order))) {
    stats.total[ngram.order - 1] += count;
    auto match = reference_max.find(ngram);
    if (match != reference_max.end()) stats.correct[ngram.order - 1] += std::min(count, match->second);
  }
  return stats;
}

// ---------------------------------------------------------------------------- sacreBLEU

BleuSmoothing parse_bleu_smoothing(std::string_view name) {
  if (name == "none") return BleuSmoothing::kNone;
  if (name == "floor") return BleuSmoothing::kFloor;
  if (name == "add-k") return BleuSmoothing::kAddK;
  if (name == "exp") return BleuSmoothing::kExp;
  throw DataError(fmt::format("unknown BLEU smoothing '{}' (choose exp, floor, add-k or none)", name));
}

std::string_view bleu_smoothing_name(BleuSmoothing smoothing) {
  switch (smoothing) {
    case BleuSmoothing::kNone: return "none";
    case BleuSmoothing::kFloor: return "floor";
    case BleuSmoothing::kAddK: return "add-k";
    case BleuSmoothing::kExp: return "exp";
  }
  return "none";
}

std::string sacrebleu_preprocess(std::string_view segment, const SacreBleuOptions& options) {
  if (!options.lowercase) return apply_bleu_tokenizer(options.tokenizer, rstrip_python_whitespace(segment));
  return apply_bleu_tokenizer(options.tokenizer, rstrip_python_whitespace(python_lower(segment)));
}

// sacreBLEU BLEU.compute_bleu, operation for operation.
BleuScore sacrebleu_compute(const BleuStats& stats, const SacreBleuOptions& options, BleuStatsArithmetic arithmetic) {
  // A float32 statistic or quotient, as NumPy 2 rounds it (a Python float operand is cast first).
  const auto in_float32 = [arithmetic](double value) {
    return arithmetic == BleuStatsArithmetic::kFloat32 ? double(float(value)) : value;
  };
  const size_t max_order = size_t(options.max_order);
  if (stats.correct.size() != max_order)
    throw DataError(fmt::format("BLEU: statistics of max order {} scored with max order {}", stats.correct.size(),
                                max_order));
  const double smooth_value = options.smooth_value.value_or(default_smooth_value(options.smoothing));
  BleuScore score = score_skeleton(stats);
  score.bp = 1.0;
  if (stats.sys_len < stats.ref_len)
    score.bp = stats.sys_len > 0 ? std::exp(1.0 - double(stats.ref_len) / double(stats.sys_len)) : 0.0;
  score.precisions.assign(max_order, 0.0);
  bool any_match = false;
  for (int64_t c : stats.correct) any_match = any_match || c != 0;
  if (!any_match) return score;

  double smooth_mteval = 1.0;
  size_t effective_order = max_order;
  for (size_t n = 1; n <= max_order; ++n) {
    double& correct = score.counts[n - 1];
    double& total = score.totals[n - 1];
    if (options.smoothing == BleuSmoothing::kAddK && n > 1) {
      correct = in_float32(correct + in_float32(smooth_value));
      total = in_float32(total + in_float32(smooth_value));
    }
    if (total == 0) break;
    if (options.effective_order) effective_order = n;
    double& precision = score.precisions[n - 1];
    if (correct != 0) {
      precision = in_float32(in_float32(100.0 * correct) / total);
    } else if (options.smoothing == BleuSmoothing::kExp) {
      smooth_mteval *= 2;
      precision = in_float32(100.0 / in_float32(smooth_mteval * total));
    } else if (options.smoothing == BleuSmoothing::kFloor) {
      precision = in_float32(in_float32(100.0 * smooth_value) / total);
    }
  }
  double log_sum = 0.0;
  for (size_t n = 0; n < effective_order; ++n) log_sum += log_or_floor(score.precisions[n]);
  score.score = score.bp * std::exp(log_sum / double(effective_order));
  return score;
}

BleuStats sacrebleu_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                                  const SacreBleuOptions& options) {
  std::vector<std::string> prepared_references;
  std::vector<Tokens> reference_tokens;
  prepared_references.reserve(references.size());
  for (const std::string& reference : references) prepared_references.push_back(sacrebleu_preprocess(reference, options));
  for (const std::string& reference : prepared_references) reference_tokens.push_back(split_python_whitespace(reference));
  std::string prepared_hypothesis = sacrebleu_preprocess(hypothesis, options);
  return segment_stats(split_python_whitespace(prepared_hypothesis), reference_tokens, options.max_order);
}

std::vector<BleuStats> sacrebleu_segments_stats(const std::vector<std::string>& hypotheses,
                                                const std::vector<std::vector<std::string>>& reference_streams,
                                                const SacreBleuOptions& options) {
  return each_segment_stats("BLEU", hypotheses, reference_streams,
                            [&](const std::string& hypothesis, const std::vector<std::string>& references) {
                              return sacrebleu_segment_stats(hypothesis, references, options);
                            });
}

BleuScore sacrebleu_corpus_score(const std::vector<std::string>& hypotheses,
                                 const std::vector<std::vector<std::string>>& reference_streams,
                                 const SacreBleuOptions& options) {
  const std::vector<BleuStats> segments = sacrebleu_segments_stats(hypotheses, reference_streams, options);
  return sacrebleu_compute(sum_stats(segments, options.max_order), options);
}

BleuStats sum_stats(const std::vector<BleuStats>& segments, int max_order) {
  BleuStats sum(max_order);
  for (const BleuStats& segment : segments) sum += segment;
  return sum;
}

BleuScore sacrebleu_sentence_score(std::string_view hypothesis, const std::vector<std::string>& references,
                                   const SacreBleuOptions& options) {
  return sacrebleu_compute(sacrebleu_segment_stats(hypothesis, references, options), options);
}

std::string sacrebleu_signature(const SacreBleuOptions& options, int num_references, bool short_form,
                                const std::optional<SignificanceSignature>& significance) {
  std::string smoothing(bleu_smoothing_name(options.smoothing));
  if (smoothing_has_value(options.smoothing))
    smoothing = fmt::format("{}[{}]", smoothing,
                            fixed_decimals(options.smooth_value.value_or(default_smooth_value(options.smoothing)), 2));
  std::string test;  // sacreBLEU keeps its fields in order: nrefs, bs or ar, seed, then the metric's
  if (significance)
    test = fmt::format(fmt::runtime(short_form ? "|{}:{}|rs:{}" : "|{}:{}|seed:{}"), significance->test,
                       significance->samples, significance->seed);
  return fmt::format(fmt::runtime(short_form ? "#:{}{}|c:{}|e:{}|tok:{}|s:{}|v:{}"
                                             : "nrefs:{}{}|case:{}|eff:{}|tok:{}|smooth:{}|version:{}"),
                     num_references, test, options.lowercase ? "lc" : "mixed", options.effective_order ? "yes" : "no",
                     bleu_tokenizer_name(options.tokenizer), smoothing, kSacreBleuVersion);
}

namespace {

// `p1/p2/p3/p4 (BP = … ratio = … hyp_len = … ref_len = …)`: what follows the score.
std::string sacrebleu_verbose_part(const BleuScore& score) {
  std::string precisions;
  for (double p : score.precisions) {
    if (!precisions.empty()) precisions.push_back('/');
    precisions.append(fixed_decimals(p, 1));
  }
  return fmt::format("{} (BP = {} ratio = {} hyp_len = {} ref_len = {})", precisions, fixed_decimals(score.bp, 3),
                     fixed_decimals(score.ratio, 3), score.sys_len, score.ref_len);
}

bool has_interval(const std::optional<BleuConfidence>& confidence) { return confidence && confidence->mean > 0; }

// `μ = {mean} ± {ci}`.
std::string interval_text(const BleuConfidence& confidence, int width) {
  return fmt::format("μ = {} ± {}", fixed_decimals(confidence.mean, width), fixed_decimals(confidence.ci, width));
}

}  // namespace

std::string format_sacrebleu_score_only(const BleuScore& score, int width,
                                        const std::optional<BleuConfidence>& confidence) {
  std::string value = fixed_decimals(score.score, width);
  if (has_interval(confidence)) value += " (" + interval_text(*confidence, width) + ")";
  return value;
}

std::string format_sacrebleu_score(const BleuScore& score, std::string_view signature, int width,
                                   const std::optional<BleuConfidence>& confidence) {
  return fmt::format("BLEU{}{} = {} {}", signature.empty() ? "" : "|", signature,
                     format_sacrebleu_score_only(score, width, confidence), sacrebleu_verbose_part(score));
}

std::string format_sacrebleu_json(const BleuScore& score, std::string_view signature, int width,
                                  const std::optional<BleuConfidence>& confidence) {
  nlohmann::ordered_json json;
  json["name"] = "BLEU";
  json["score"] = printed_value(score.score, width);
  json["signature"] = signature;
  if (has_interval(confidence)) {
    json["confidence_mean"] = printed_value(confidence->mean, width);
    json["confidence_var"] = printed_value(confidence->ci, width);  // sacreBLEU's name for the half-width
    json["confidence"] = interval_text(*confidence, width);
  }
  json["verbose_score"] = sacrebleu_verbose_part(score);
  return sacrebleu_score_json(std::move(json), signature);
}

// ---------------------------------------------------------------------- multi-bleu.perl

BleuStats multibleu_stats(const std::vector<std::string>& hypotheses,
                          const std::vector<std::vector<std::string>>& reference_streams, bool lowercase) {
  check_reference_streams("BLEU", hypotheses.size(), reference_streams);
  auto prepare = [lowercase](const std::string& line) { return lowercase ? ascii_lower(line) : line; };
  BleuStats corpus;
  std::vector<std::string> references(reference_streams.size());
  std::vector<Tokens> reference_tokens(reference_streams.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (size_t r = 0; r < reference_streams.size(); ++r) {
      references[r] = prepare(reference_streams[r][i]);
      reference_tokens[r] = split_perl_byte_whitespace(references[r]);
    }
    std::string hypothesis = prepare(hypotheses[i]);
    BleuStats segment = segment_stats(split_perl_byte_whitespace(hypothesis), reference_tokens);
    segment.ref_len = closest_reference_length(segment.sys_len, reference_tokens, kMultiBleuFarthestLength);
    corpus += segment;
  }
  return corpus;
}

// multi-bleu.perl: fractions p_n, BP = exp(1 − ref/hyp), BLEU = BP·exp((Σ my_log p_n)/4),
// printed ×100.
BleuScore multibleu_compute(const BleuStats& stats) {
  if (stats.correct.size() != 4) throw DataError("multi-bleu: statistics must be of max order 4");
  if (stats.ref_len == 0)
    throw DataError("multi-bleu: the total reference length is 0 (multi-bleu.perl prints "
                    "'BLEU = 0, 0/0/0/0 (BP=0, ratio=0, hyp_len=0, ref_len=0)' and fails)");
  if (stats.sys_len == 0)
    throw DataError(fmt::format("multi-bleu: the hypotheses are empty but the references have {} tokens "
                                "(multi-bleu.perl dies dividing by zero)",
                                stats.ref_len));
  BleuScore score = score_skeleton(stats);
  std::vector<double> p = fractions(stats);
  score.bp = 1.0;
  if (stats.sys_len < stats.ref_len) score.bp = std::exp(1.0 - double(stats.ref_len) / double(stats.sys_len));
  double log_sum = log_or_floor(p[0]) + log_or_floor(p[1]) + log_or_floor(p[2]) + log_or_floor(p[3]);
  score.score = 100.0 * (score.bp * std::exp(log_sum / 4.0));
  for (double fraction : p) score.precisions.push_back(100.0 * fraction);
  return score;
}

std::string format_multibleu_score(const BleuScore& score) {
  return format_bleu4_line(score, "BLEU", "hyp_len", "ref_len");
}

// ------------------------------------------------------------------------ fairseq-score

std::vector<BleuStats> fairseq_sentence_stats(const std::vector<std::string>& hypotheses,
                                              const std::vector<std::string>& references, bool ignore_case) {
  if (references.size() != hypotheses.size())
    throw DataError(fmt::format("fairseq-score: {} reference lines but {} hypotheses", references.size(),
                                hypotheses.size()));
  auto prepare = [ignore_case](const std::string& line) { return ignore_case ? python_lower(line) : line; };
  std::vector<BleuStats> sentences;
  for (size_t i = 0; i < hypotheses.size(); ++i)
    sentences.push_back(
        segment_stats(fairseq_tokens(prepare(hypotheses[i]), false), {fairseq_tokens(prepare(references[i]), true)}));
  return sentences;
}

BleuStats fairseq_stats(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references,
                        bool ignore_case) {
  BleuStats corpus;
  for (const BleuStats& sentence : fairseq_sentence_stats(hypotheses, references, ignore_case)) corpus += sentence;
  return corpus;
}

BleuStats fairseq_one_initialized(BleuStats stats) {
  for (size_t n = 1; n < stats.correct.size(); ++n) {  // libbleu's bleu_one_init: unigrams and lengths from 0
    ++stats.correct[n];
    ++stats.total[n];
  }
  return stats;
}

// fairseq scoring/bleu.py: BP = min(1, exp(1 − reflen/predlen)), BLEU = BP·exp(Σ log p_n / N)·100
// over the first N = order precisions, with log 0 = −inf.
BleuScore fairseq_compute(const BleuStats& stats, int order) {
  if (stats.correct.size() != 4) throw DataError("fairseq-score: statistics must be of max order 4");
  if (order < 1 || order > 4) throw DataError(fmt::format("fairseq-score: BLEU order {} is not 1 to 4", order));
  if (stats.sys_len == 0 || stats.ref_len == 0)
    throw DataError(fmt::format("fairseq-score: nothing to score (syslen={}, reflen={})", stats.sys_len,
                                stats.ref_len));
  BleuScore score = score_skeleton(stats);
  std::vector<double> p = fractions(stats);
  p.resize(size_t(order));
  score.bp = std::min(1.0, std::exp(1.0 - double(stats.ref_len) / double(stats.sys_len)));
  double log_sum = 0.0;
  for (double fraction : p) log_sum += fraction > 0 ? std::log(fraction) : -HUGE_VAL;
  score.score = score.bp * std::exp(log_sum / double(order)) * 100.0;
  for (double fraction : p) score.precisions.push_back(fraction * 100.0);
  return score;
}

std::string format_fairseq_score(const BleuScore& score) {
  std::vector<std::string> precisions;
  for (double precision : score.precisions) precisions.push_back(fixed_decimals(precision, 1));
  return fmt::format("BLEU{} = {}, {} (BP={}, ratio={}, syslen={}, reflen={})", score.precisions.size(),
                     fixed_decimals(score.score, 2), fmt::join(precisions, "/"), fixed_decimals(score.bp, 3),
                     fixed_decimals(score.ratio, 3), score.sys_len, score.ref_len);
}

}  // namespace attn::data
