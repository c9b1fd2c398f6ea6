// TER, the translation edit rate (Snover et al. 2006), as sacreBLEU 2.6.0 computes and prints it
// (`sacrebleu -m ter`, docs/mt-tools.md §3.10).
//
// A hypothesis's edits against one reference (both cut into words by ter_tokenizer.hpp) are the
// word insertions, deletions and substitutions of an edit distance plus one edit per shift of a
// run of words. Shifts are chosen greedily, one at a time, while the best one lowers the edit
// distance; the candidates (runs of up to 10 words that also occur in the reference at most 50
// positions away, both wrongly aligned, moved next to a word aligned with the reference run) are
// ranked by the reduction, then the longer run, then the earlier run, then the earlier target.
// The edit distance is sacreBLEU's beam search, exploring 25 cells on each side of the
// length-scaled diagonal of each row (wider for a reference over 50 times longer), which may
// exceed the true distance. After 1000 candidates in all the search stops, and the best shift of
// the round that reached the limit is not made. Against an empty reference the edits are the
// hypothesis's words.
//
// Per hypothesis the statistics are the fewest edits to any reference and the mean reference
// length; the score is 100 · Σ edits / Σ mean lengths (100 when only the references are empty,
// 0 when everything is).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/ter_tokenizer.hpp"

namespace attn::data {

struct TerStats {
  int64_t edits = 0;
  double reference_length = 0;  // the mean over the references, a Python float
};

// Shifts and word edits turning `hypothesis` into `reference` (words as ter_words gives them).
int64_t ter_edits(const std::vector<std::string>& hypothesis, const std::vector<std::string>& reference);

// The statistics of one hypothesis against its references (lines as read).
TerStats ter_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                           const TerOptions& options);
// Every segment's statistics against one or more reference streams as long as the hypotheses.
std::vector<TerStats> ter_segments_stats(const std::vector<std::string>& hypotheses,
                                         const std::vector<std::vector<std::string>>& reference_streams,
                                         const TerOptions& options);
// The score (a percentage, above 100 when the edits outnumber the reference words) of
// statistics, one segment's or summed.
double ter_compute(const TerStats& stats);
// Corpus TER: ter_compute of the segments' statistics summed in order.
double ter_corpus_score(const std::vector<std::string>& hypotheses,
                        const std::vector<std::vector<std::string>>& reference_streams, const TerOptions& options);

// `nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0`, or the short form
// `#:1|c:lc|t:tercom|nr:no|pn:yes|as:no|v:2.6.0`.
std::string ter_signature(const TerOptions& options, int num_references, bool short_form = false);
// `TER|{signature} = {score:.{width}f}`.
std::string format_ter_score(double score, std::string_view signature, int width);
// `{score:.{width}f}`.
std::string format_ter_score_only(double score, int width);
// sacreBLEU's JSON of a TER score: name, score rounded to `width` decimals, the signature, then
// each `key:value` of the signature, indented by one space.
std::string format_ter_json(double score, std::string_view signature, int width);

}  // namespace attn::data
