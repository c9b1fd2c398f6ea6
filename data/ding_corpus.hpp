// The Ding EN-DE teaching corpus: real sentence pairs taken from the Ding German-English
// dictionary (Frank Richter, TU Chemnitz; GPL), shipped by Debian's package trans-de-en as
// /usr/share/trans/de-en (docs/design.md §5; issue 3 "Corpora").
//
// Each dictionary line is `German :: English`; both sides are split at ` | ` into aligned
// sub-entries (skipped when the two sides have different counts). A sub-entry pair is kept
// when, after cleaning, both sides are sentences: they end in . ? or ! and have at least three
// words. Cleaning removes `{...}` (grammar) and `[...]` (usage, region) annotations together
// with the space before them, keeps the first of `;`-separated alternatives and collapses
// runs of spaces. `#` lines are comments. Pairs are deduplicated (first occurrence kept) and
// split into train / valid / test by a seeded shuffle (seeded_shuffle.hpp), so a seed always
// gives the same split.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

inline constexpr const char* kDingDefaultPath = "/usr/share/trans/de-en";

struct SentencePair {
  std::string english, german;
  bool operator==(const SentencePair&) const = default;
};

// One side of a sub-entry without annotations, alternatives after the first, extra spaces.
std::string clean_ding_text(std::string_view text);
// True when text ends in . ? or ! and has at least three space-separated words.
bool is_ding_sentence(std::string_view text);
// The sentence pairs of one dictionary line (none for comments and malformed lines).
std::vector<SentencePair> ding_sentence_pairs(std::string_view line);
// All distinct sentence pairs of a Ding dictionary file, in file order. A missing file is an
// error naming the Debian package trans-de-en.
std::vector<SentencePair> read_ding_sentence_pairs(const std::string& path);

struct CorpusSplit {
  std::vector<SentencePair> train, valid, test;
};

// Shuffles pairs with the seed, then takes valid_size pairs for valid, test_size for test
// and the rest for train. Errors when fewer than valid_size + test_size + 1 pairs exist.
CorpusSplit split_corpus(std::vector<SentencePair> pairs, uint64_t seed, size_t valid_size = 1000,
                         size_t test_size = 1000);
// Writes train.en train.de valid.en valid.de test.en test.de into out_dir (created when
// missing), each file atomically.
void write_corpus_split(const CorpusSplit& split, const std::string& out_dir);

}  // namespace attn::data
