// Learning byte-pair-encoding merges, byte-exact with subword-nmt 0.3.9 `learn_bpe`
// (docs/mt-tools.md §1.1, codes format §1.2, I/O §1.4, joint recipe §1.5 (C)).
//
// Sennrich et al. 2016: start from characters (the last one carrying the end-of-word marker
// "</w>"), repeatedly merge the most frequent adjacent symbol pair. subword-nmt's choices are
// reproduced exactly, quirks included: ties go to the greatest (left, right) in code-point
// order, overlapping pairs are all counted, the incremental statistics update double-counts a
// merged string that already existed as a symbol, and its pruning of rare pairs (which can
// change a count in that same corner case) is replicated — only the data structures differ
// (a heap with lazy deletion instead of a linear max, symbol ids instead of tuples).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/bpe_text.hpp"

namespace attn::data {

// Word frequencies in order of first appearance (Python Counter order).
class WordCounts {
 public:
  void add(std::string_view word, int64_t count);
  const std::vector<std::pair<std::string, int64_t>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, int64_t>> items_;
  StringMap<size_t> index_;
};

// Counts the ' '-separated words of every line (get_vocabulary).
void count_words(const TextLines& text, WordCounts& counts);
// `--dict-input`: every line is "word count" (one ' ', a count >= 0); repeated words add up.
// `name` labels errors (DataError "name:line: ...").
void read_dictionary(const TextLines& text, const std::string& name, WordCounts& counts);

struct BpeLearnOptions {
  int64_t num_symbols = 10000;  // -s: at most this many merges
  int64_t min_frequency = 2;    // stop when the best pair is rarer than this (must be >= 1)
};

struct BpeMerge {
  std::string left, right;
  int64_t frequency;  // the pair's count when it was chosen (the `-v` trace)
};

struct BpeLearnResult {
  std::vector<BpeMerge> merges;
  bool stopped_by_min_frequency = false;  // "no pair has frequency >= F. Stopping"
};

BpeLearnResult learn_bpe(const WordCounts& vocabulary, const BpeLearnOptions& options);

// The codes file: "#version: 0.2\n" then "left right\n" per merge.
std::string format_bpe_codes(const std::vector<BpeMerge>& merges);
// The `-v` line of merge number `rank`: "pair R: L R -> LR (frequency F)\n".
std::string format_merge_trace(size_t rank, const BpeMerge& merge);

// learn_joint_bpe_and_vocab: learns on the word counts of all files together, then applies
// the codes to each file and counts the resulting subwords ("word count" lines, most frequent
// first, ties in order of first appearance).
struct JointBpeResult {
  BpeLearnResult codes;
  std::vector<std::string> vocabularies;  // one vocabulary file content per input
};
JointBpeResult learn_joint_bpe(const std::vector<std::string>& input_paths, const BpeLearnOptions& options);

}  // namespace attn::data
