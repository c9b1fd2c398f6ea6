// Moses clean-corpus-n.perl [-ratio R] CORPUS L1 L2 OUT MIN MAX (docs/mt-tools.md §2.5): keeps
// the sentence pairs of CORPUS.L1 / CORPUS.L2 that are not empty, have MIN..MAX words on
// both sides, a word-count ratio of at most R both ways (default 9) and no word longer than
// 1000 characters, and writes them, cleaned, to OUT.L1 / OUT.L2. The recipes (§1.5) apply
// it to tokenized text with `1 80` (GNMT, wmt16_en_de_bpe32k) and to BPE'd text with
// `-ratio 1.5 1 250` (fairseq prepare-wmt14en2de.sh, counting subwords).
//
// Per line (decoded UTF-8, so \s is Unicode White_Space: tab, '\r', NBSP, U+2009 ...):
//   remove every '|' unless the first line of either file contains one ("factored" corpus),
//   runs of \s → one space, one leading and one trailing space removed;
//   words = the pieces between single spaces; word length = code points in a run of
//   characters other than \s and '|'.
// Differences from the script, for bad input only: line counts that differ and invalid UTF-8
// are errors found before anything is written (naming both files and counts, or FILE:LINE);
// *.gz inputs and -lc / -ignore-ratio / -ignore-xml are not supported.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace attn::data {

struct CleanCorpusOptions {
  size_t min_words = 1, max_words = 80;
  double max_ratio = 9;           // -ratio
  size_t max_word_length = 1000;  // -max-word-length, in code points
};

enum class PairVerdict { Keep, Empty, Length, Ratio, LongWord };

struct CleanCorpusReport {
  size_t input_pairs = 0, kept_pairs = 0;
  size_t empty = 0, out_of_length = 0, over_ratio = 0, long_word = 0;  // dropped, by first failing rule

  size_t dropped_pairs() const { return input_pairs - kept_pairs; }
};

// One side's cleaned line (without '\n'); `keep_bars` for factored corpora.
std::string clean_corpus_line(std::string_view line, bool keep_bars);
// The script's tests on a cleaned pair, in its order.
PairVerdict judge_pair(std::string_view first, std::string_view second, const CleanCorpusOptions& options);

// Reads CORPUS.L1 and CORPUS.L2, writes OUT.L1 and OUT.L2 (atomically, both or neither).
CleanCorpusReport clean_corpus(const std::string& corpus, const std::string& l1, const std::string& l2,
                               const std::string& out, const CleanCorpusOptions& options);

}  // namespace attn::data
