// fairseq Dictionary: symbols <-> ids, the dict.txt file format, and line encoding
// (docs/mt-tools.md §4; docs/models.md §1.1 for the special ids).
//
// * ids 0..3 are the specials <s> <pad> </s> <unk>; real symbols follow.
// * Building: count whitespace-separated tokens of every line (plus one </s> per line), then
//   finalize(threshold, nwords, padding_factor): symbols sorted by count descending, ties by
//   symbol in code-point order, kept while count >= threshold, at most nwords in total, and
//   the total size padded to a multiple of padding_factor with madeupword0000, ... (count 0).
// * dict.txt: one "symbol count" line per non-special symbol, in id order (id = line + 3).
//   Loading splits each line at its last space; an optional trailing "#fairseq:overwrite"
//   flag lets a symbol appear twice (the later id wins), otherwise duplicates are errors.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::data {

// Python's str.split() on a line: tokens separated by runs of Unicode whitespace (the
// characters for which str.isspace() is true), as fairseq's tokenize_line does.
std::vector<std::string_view> split_on_whitespace(std::string_view line);

struct EncodedLine {
  std::vector<int32_t> ids;    // token ids followed by </s> when requested
  int64_t unknown_tokens = 0;  // tokens that were not in the dictionary (mapped to <unk>)
};

class Dictionary {
 public:
  static constexpr int32_t kBos = 0, kPad = 1, kEos = 2, kUnk = 3;
  static constexpr int32_t kNumSpecial = 4;

  Dictionary();  // holds only the four specials

  // Adds n occurrences of word; returns its id. overwrite=true appends a second entry even
  // when the word exists (the dict.txt "#fairseq:overwrite" flag).
  int32_t add_symbol(std::string_view word, int64_t n = 1, bool overwrite = false);
  // Counts the tokens of one line and one </s> (fairseq add_file_to_dictionary).
  void add_line(std::string_view line);
  // add_line for every line of a text file (UTF-8 checked, errors name file:line).
  void add_file(const std::string& path);
  // Adds the counts of `other`'s symbols (merging per-worker dictionaries).
  void merge_counts(const Dictionary& other);

  // Sorts and trims as described above. threshold <= 0 keeps all counts; nwords <= 0 means
  // no limit; padding_factor <= 1 adds no padding words.
  void finalize(int64_t threshold = -1, int64_t nwords = -1, int64_t padding_factor = 8);
  // Appends madeupword0000, 0001, ... (count 0; one already present is skipped) until the
  // size is a multiple of padding_factor; padding_factor <= 1 adds none.
  void pad_to_multiple(int64_t padding_factor);

  size_t size() const { return symbols_.size(); }
  // Id of word, or kUnk when it is not in the dictionary.
  int32_t index(std::string_view word) const;
  bool contains(std::string_view word) const;
  const std::string& symbol(int32_t id) const;
  int64_t count(int32_t id) const;

  // Token ids of a line (unknown words -> <unk>, counted), followed by </s> if append_eos.
  EncodedLine encode_line(std::string_view line, bool append_eos = true) const;
  // Symbols of ids joined by spaces, skipping <s>, <pad> and </s> (unless include_eos).
  // Then post-processed by `scheme` as fairseq's --post-process does (data/post_process.hpp:
  // "@@ " or subword_nmt removes BPE's marker; "": the symbols as they are).
  std::string decode(std::span<const int64_t> ids, std::string_view scheme = "", bool include_eos = false) const;

  // What the ids mean, as one number: FNV-1a 64 of every symbol in id order, each followed
  // by a newline. Counts are left out (they do not change what an id stands for). A
  // binarized corpus records it, so data made with another dictionary of the same size is
  // caught before training on the wrong words.
  uint64_t fingerprint() const;

  // dict.txt text (without the specials) and file I/O (save is atomic).
  std::string to_text() const;
  void save(const std::string& path) const;
  static Dictionary load(const std::string& path);
  static Dictionary parse(std::string_view text, const std::string& source_name);

 private:
  std::vector<std::string> symbols_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int32_t> indices_;
};

// fairseq-preprocess's dictionary building: the counts of every line of every file (split
// over `workers` threads; the result does not depend on it), then finalize(...).
Dictionary build_dictionary(const std::vector<std::string>& files, int64_t threshold, int64_t nwords,
                            int64_t padding_factor, int workers = 1);

// One dictionary for both languages whose first entries are `target`'s, in its order, so
// that ids below target.size() name the same symbols in both and a model sharing one
// embedding can predict only the target side's symbols (docs/mt-tools.md §4.1). Then the
// symbols of `source` that `target` lacks, in `source`'s order; the whole padded to a
// multiple of padding_factor with madeupwords numbered after `target`'s own.
Dictionary target_first_joined_dictionary(const Dictionary& target, const Dictionary& source, int64_t padding_factor);

// fairseq's name of a language's dictionary in a data dir or model archive: dict.LANG.txt.
std::string dictionary_file_name(const std::string& lang);

}  // namespace attn::data
