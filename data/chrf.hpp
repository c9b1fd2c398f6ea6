// chrF (Popović 2015) and chrF++ (Popović 2017) as sacreBLEU 2.6.0 computes and prints them
// (`sacrebleu -m chrf`, docs/mt-tools.md §3.9).
//
// A segment (its trailing Python whitespace already gone, lower-cased first when asked) yields
// character n-grams of orders 1..char_order over its code points, PyWS removed unless
// `whitespace`, and word n-grams of orders 1..word_order over its PyWS-separated words, each word
// of two or more code points having one ASCII punctuation character split off its end (else off
// its start). Per order the statistics are [hypothesis n-grams, reference n-grams, matches]
// (matches clipped by the reference counts; the hypothesis count is 0 against a reference without
// n-grams of that order). With several references a segment keeps the statistics of the first
// reference with the best f-score. The corpus score is the f-score of the summed statistics:
// precisions and recalls averaged over the orders where both sides have n-grams (the effective
// order), then F_beta; with eps_smoothing the mean of per-order F_beta, 1e-16 standing in for an
// undefined precision, recall or F.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/bleu.hpp"

namespace attn::data {

struct ChrfOptions {
  int char_order = 6;  // sacreBLEU's --chrf-char-order
  int word_order = 0;  // --chrf-word-order; 2 is chrF++
  int beta = 2;        // --chrf-beta: recall weighs beta times precision
  bool lowercase = false, whitespace = false, eps_smoothing = false;
};

// 3 · (char_order + word_order) counts: [hyp, ref, match] for each character order, then each word order.
using ChrfStats = std::vector<int64_t>;

// Throws DataError for negative orders, no order at all, or orders or beta too large to matter.
void check_chrf_options(const ChrfOptions& options);

// The best statistics of one hypothesis against its references (valid UTF-8, as read: the
// trailing PyWS is stripped here as sacreBLEU's command line strips it).
ChrfStats chrf_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                             const ChrfOptions& options);
// Every segment's statistics against one or more reference streams as long as the hypotheses.
std::vector<ChrfStats> chrf_segments_stats(const std::vector<std::string>& hypotheses,
                                           const std::vector<std::vector<std::string>>& reference_streams,
                                           const ChrfOptions& options);
// The score (0..100) of summed statistics.
double chrf_compute(const ChrfStats& stats, const ChrfOptions& options);
// Corpus chrF: chrf_compute of the element-wise sum of the segments' statistics.
double chrf_corpus_score(const std::vector<std::string>& hypotheses,
                         const std::vector<std::vector<std::string>>& reference_streams, const ChrfOptions& options);

// `chrF2`, with one '+' per word order (`chrF2++` for chrF++).
std::string chrf_name(const ChrfOptions& options);
// `nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0`, or the short form
// `#:1|c:mixed|e:yes|nc:6|nw:0|s:no|v:2.6.0`.
std::string chrf_signature(const ChrfOptions& options, int num_references, bool short_form = false);
// `chrF2|{signature} = {score:.{width}f}`.
std::string format_chrf_score(const ChrfOptions& options, double score, std::string_view signature, int width);
// `{score:.{width}f}`.
std::string format_chrf_score_only(double score, int width);
// sacreBLEU's JSON of a chrF score: name, score rounded to `width` decimals, the signature, then
// each `key:value` of the signature, indented by one space.
std::string format_chrf_json(const ChrfOptions& options, double score, std::string_view signature, int width);

}  // namespace attn::data
