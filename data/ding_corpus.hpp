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
//
// The dictionary's word and phrase entries — every other aligned sub-entry pair, cleaned the
// same way ("Haus {n} | Häuser {pl}" :: "house | houses" gives house/Haus and houses/Häuser),
// several hundred thousand of them — are extra training data (issue 11 "A demo that teaches"):
// they never enter valid or test, which stay sentence pairs only.
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
// The word and phrase entries of one dictionary line: its aligned sub-entry pairs that are not
// sentence pairs, both sides non-empty after cleaning (none for comments and malformed lines).
std::vector<SentencePair> ding_entry_pairs(std::string_view line);
// All distinct sentence pairs of a Ding dictionary file, in file order. A missing file is an
// error naming the Debian package trans-de-en.
std::vector<SentencePair> read_ding_sentence_pairs(const std::string& path);

struct DingCorpus {
  std::vector<SentencePair> sentences;  // as read_ding_sentence_pairs returns them
  std::vector<SentencePair> entries;    // distinct word and phrase entries, in file order
};
// Sentence pairs and dictionary entries of a Ding file in one pass (errors as above).
DingCorpus read_ding_corpus(const std::string& path);

struct CorpusSplit {
  std::vector<SentencePair> train, valid, test;
};

// Shuffles pairs with the seed, then takes valid_size pairs for valid, test_size for test
// and the rest for train. Errors when fewer than valid_size + test_size + 1 pairs exist.
CorpusSplit split_corpus(std::vector<SentencePair> pairs, uint64_t seed, size_t valid_size = 1000,
                         size_t test_size = 1000);
// Appends to split.train the first `count` entries (all when fewer) in the order of a seeded
// shuffle, so a seed and a count always give the same subset; valid and test are untouched.
void add_entries_to_train(CorpusSplit& split, std::vector<SentencePair> entries, size_t count, uint64_t seed);
// Writes train.en train.de valid.en valid.de test.en test.de into out_dir (created when
// missing), the six files atomically together (data/text_io.hpp OutputFiles).
void write_corpus_split(const CorpusSplit& split, const std::string& out_dir);

}  // namespace attn::data
