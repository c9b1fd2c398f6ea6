// chrF and chrF++ statistics, sacreBLEU's arithmetic and its output lines; see chrf.hpp and
// docs/mt-tools.md §3.9.
#include "data/chrf.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <fmt/core.h>

#include "data/bleu_tokenizers.hpp"
#include "data/bpe_text.hpp"
#include "data/perl_unicode.hpp"
#include "data/reference_streams.hpp"
#include "data/sacrebleu_output.hpp"
#include "data/text_io.hpp"

namespace attn::data {
namespace {

// Larger orders or |beta| change nothing a test set can show, and |beta| ≤ 1000 keeps beta² and
// 1 + beta² exact in a double, as they are in Python's integers.
constexpr int kMaxChrfOrder = 100;
constexpr int kMaxChrfBeta = 1000;

// The n-gram counts of one order; keys view the segment's text (code points or UTF-8 words).
using CharCounts = std::unordered_map<std::u32string_view, int64_t>;
using WordCounts = std::unordered_map<std::string, int64_t>;

// One segment's n-grams of every order, keeping the text its character n-grams point into.
struct SegmentNgrams {
  std::u32string characters;
  std::vector<CharCounts> char_ngrams;  // order 1..char_order
  std::vector<WordCounts> word_ngrams;  // order 1..word_order
};

// The ASCII punctuation characters split off word ends (Python's string.punctuation).
bool is_ascii_punctuation(char c) {
  return std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(c) != std::string_view::npos;
}

// Words as chrF++ sees them: PyWS-separated, a word of two or more code points losing a final
// ASCII punctuation character to a word of its own, or else a leading one (only one, so `(hi)`
// gives `(hi` and `)`).
std::vector<std::string_view> chrf_words(std::string_view segment) {
  std::vector<std::string_view> words;
  for (std::string_view word : split_python_whitespace(segment)) {
    // Multi-byte UTF-8 never contains ASCII bytes, so the first and last bytes tell the first and
    // last code points apart from ASCII punctuation, and one byte of punctuation is one code point.
    const bool single = utf8_char_length(static_cast<unsigned char>(word.front())) == word.size();
    if (!single && is_ascii_punctuation(word.back())) {
      words.push_back(word.substr(0, word.size() - 1));
      words.push_back(word.substr(word.size() - 1));
    } else if (!single && is_ascii_punctuation(word.front())) {
      words.push_back(word.substr(0, 1));
      words.push_back(word.substr(1));
    } else {
      words.push_back(word);
    }
  }
  return words;
}

WordCounts word_ngrams(const std::vector<std::string_view>& words, size_t n) {
  WordCounts counts;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    std::string key(words[i]);
    for (size_t k = 1; k < n; ++k) key.append(" ").append(words[i + k]);
    ++counts[key];
  }
  return counts;
}

// `segment` is already rstripped and lower-cased as asked.
SegmentNgrams segment_ngrams(std::string_view segment, const ChrfOptions& options) {
  SegmentNgrams ngrams;
  const std::u32string decoded = perl::decode_utf8(segment, "chrF segment");
  if (options.whitespace) {
    ngrams.characters = decoded;
  } else {
    for (char32_t c : decoded)
      if (!is_python_whitespace(c)) ngrams.characters.push_back(c);
  }
  const std::u32string_view text = ngrams.characters;
  for (size_t n = 1; n <= size_t(options.char_order); ++n) {
    CharCounts& counts = ngrams.char_ngrams.emplace_back();
    for (size_t i = 0; i + n <= text.size(); ++i) ++counts[text.substr(i, n)];
  }
  if (options.word_order > 0) {
    const std::vector<std::string_view> words = chrf_words(segment);
    for (size_t n = 1; n <= size_t(options.word_order); ++n) ngrams.word_ngrams.push_back(word_ngrams(words, n));
  }
  return ngrams;
}

// Appends [hyp, ref, match] of one order; the hypothesis count is 0 against no reference n-grams.
template <typename Counts>
void append_match_stats(const Counts& hypothesis, const Counts& reference, ChrfStats& stats) {
  int64_t hyp_count = 0, ref_count = 0, matches = 0;
  for (const auto& [ngram, count] : hypothesis) {
    hyp_count += count;
    if (auto it = reference.find(ngram); it != reference.end()) matches += std::min(count, it->second);
  }
  for (const auto& entry : reference) ref_count += entry.second;
  stats.insert(stats.end(), {reference.empty() ? 0 : hyp_count, ref_count, matches});
}

ChrfStats match_stats(const SegmentNgrams& hypothesis, const SegmentNgrams& reference) {
  ChrfStats stats;
  for (size_t n = 0; n < hypothesis.char_ngrams.size(); ++n)
    append_match_stats(hypothesis.char_ngrams[n], reference.char_ngrams[n], stats);
  for (size_t n = 0; n < hypothesis.word_ngrams.size(); ++n)
    append_match_stats(hypothesis.word_ngrams[n], reference.word_ngrams[n], stats);
  return stats;
}

// The segment as scored: trailing PyWS removed (as sacreBLEU's command line reads lines), then
// lower-cased when asked.
std::string prepare(std::string_view segment, const ChrfOptions& options) {
  const std::string_view stripped = rstrip_python_whitespace(segment);
  return options.lowercase ? python_lower(stripped) : std::string(stripped);
}

}  // namespace

void check_chrf_options(const ChrfOptions& options) {
  if (options.char_order < 0 || options.char_order > kMaxChrfOrder || options.word_order < 0 ||
      options.word_order > kMaxChrfOrder)
    throw DataError(fmt::format("chrF: character and word n-gram orders must lie in [0, {}] (got {} and {})",
                                kMaxChrfOrder, options.char_order, options.word_order));
  if (options.char_order + options.word_order == 0)
    throw DataError("chrF: character and word n-gram orders are both 0: nothing to count");
  if (std::abs(options.beta) > kMaxChrfBeta)
    throw DataError(fmt::format("chrF: beta must lie in [-{0}, {0}] (got {1})", kMaxChrfBeta, options.beta));
}

ChrfStats chrf_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                             const ChrfOptions& options) {
  check_chrf_options(options);
  if (references.empty()) throw DataError("chrF: a hypothesis without references");
  const SegmentNgrams hyp = segment_ngrams(prepare(hypothesis, options), options);
  ChrfStats best;
  double best_f_score = -1.0;
  for (const std::string& reference : references) {
    ChrfStats stats = match_stats(hyp, segment_ngrams(prepare(reference, options), options));
    // Strictly better only: among equal f-scores the first reference's statistics stay.
    if (const double f_score = chrf_compute(stats, options); f_score > best_f_score) {
      best_f_score = f_score;
      best = std::move(stats);
    }
  }
  return best;
}

std::vector<ChrfStats> chrf_segments_stats(const std::vector<std::string>& hypotheses,
                                           const std::vector<std::vector<std::string>>& reference_streams,
                                           const ChrfOptions& options) {
  return each_segment_stats("chrF", hypotheses, reference_streams,
                            [&](const std::string& hypothesis, const std::vector<std::string>& references) {
                              return chrf_segment_stats(hypothesis, references, options);
                            });
}

// sacreBLEU's _compute_f_score operation for operation (data/ builds with -ffp-contract=off, so no
// product and sum fuse into one multiply-add).
double chrf_compute(const ChrfStats& stats, const ChrfOptions& options) {
  const size_t orders = size_t(options.char_order + options.word_order);
  if (stats.size() != 3 * orders)
    throw DataError(fmt::format("chrF: {} statistics for {} n-gram orders", stats.size(), orders));
  const double eps = 1e-16;
  const double factor = double(int64_t(options.beta) * options.beta);
  const double one_plus_factor = double(1 + int64_t(options.beta) * options.beta);
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (size_t i = 0; i < orders; ++i) {
    const int64_t n_hyp = stats[3 * i], n_ref = stats[3 * i + 1], n_match = stats[3 * i + 2];
    const double prec = n_hyp > 0 ? double(n_match) / double(n_hyp) : eps;
    const double rec = n_ref > 0 ? double(n_match) / double(n_ref) : eps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? one_plus_factor * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {  // the effective order: both sides have n-grams
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * score / double(orders);
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec == 0.0) return 0.0;
  double f = one_plus_factor * avg_prec * avg_rec;
  f /= factor * avg_prec + avg_rec;
  return 100 * f;
}

double chrf_corpus_score(const std::vector<std::string>& hypotheses,
                         const std::vector<std::vector<std::string>>& reference_streams, const ChrfOptions& options) {
  const std::vector<ChrfStats> segments = chrf_segments_stats(hypotheses, reference_streams, options);
  ChrfStats total(3 * size_t(options.char_order + options.word_order), 0);
  for (const ChrfStats& segment : segments)
    for (size_t k = 0; k < total.size(); ++k) total[k] += segment[k];
  return chrf_compute(total, options);
}

std::string chrf_name(const ChrfOptions& options) {
  return fmt::format("chrF{}{}", options.beta, std::string(size_t(options.word_order), '+'));
}

std::string chrf_signature(const ChrfOptions& options, int num_references, bool short_form) {
  return fmt::format(fmt::runtime(short_form ? "#:{}|c:{}|e:{}|nc:{}|nw:{}|s:{}|v:{}"
                                             : "nrefs:{}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:{}"),
                     num_references, options.lowercase ? "lc" : "mixed", options.eps_smoothing ? "no" : "yes",
                     options.char_order, options.word_order, options.whitespace ? "yes" : "no", kSacreBleuVersion);
}

std::string format_chrf_score_only(double score, int width) { return fixed_decimals(score, width); }

std::string format_chrf_score(const ChrfOptions& options, double score, std::string_view signature, int width) {
  return fmt::format("{}{}{} = {}", chrf_name(options), signature.empty() ? "" : "|", signature,
                     fixed_decimals(score, width));
}

std::string format_chrf_json(const ChrfOptions& options, double score, std::string_view signature, int width) {
  nlohmann::ordered_json json;
  json["name"] = chrf_name(options);
  json["score"] = printed_value(score, width);
  json["signature"] = signature;
  return sacrebleu_score_json(std::move(json), signature);
}

}  // namespace attn::data
