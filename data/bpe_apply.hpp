// Applying BPE codes, byte-exact with subword-nmt 0.3.9 `apply_bpe` (docs/mt-tools.md §1.2
// codes format, §1.3 algorithm, §1.4 line handling).
//
// Each word starts as its characters (the last one glued to "</w>" in v0.2 codes); the
// adjacent pair with the lowest merge rank is merged everywhere in the word (left to right,
// non-overlapping) until no pair has a rank. Optional: glossaries (regexes whose matches are
// never split), and a vocabulary that undoes merges producing rare subwords.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <unicode/uversion.h>

#include "data/bpe_text.hpp"

U_NAMESPACE_BEGIN
class RegexPattern;
U_NAMESPACE_END

namespace attn::data {

class BpeCodes {
 public:
  // Parses a codes file's content. `name` labels errors ("name:line: ..."). With `merges`
  // >= 0 only the first `merges` code lines are used (--merges).
  static BpeCodes parse(std::string_view text, const std::string& name, int64_t merges = -1);
  static BpeCodes read(const std::string& path, int64_t merges = -1);

  // Every symbol of the codes has an id; other strings have none (they never merge).
  static constexpr uint32_t kNoSymbol = UINT32_MAX;
  uint32_t symbol_id(std::string_view symbol) const;
  // The merge of two adjacent symbols: its rank (0 = first line after the header; duplicates
  // keep their first rank) and the id of the merged symbol; nullptr when the pair is no code.
  struct Merge {
    int64_t rank;
    uint32_t merged;
  };
  const Merge* find_merge(uint32_t left, uint32_t right) const;
  // bpe_codes_reverse: the pair whose concatenation is `merged`, if any.
  const std::pair<std::string, std::string>* split(std::string_view merged) const;
  bool glues_end_of_word() const { return version_minor_ >= 2; }  // v0.2 vs v0.1

 private:
  int version_minor_ = 2;
  uint32_t intern(const std::string& symbol);
  StringMap<uint32_t> symbol_ids_;
  std::unordered_map<uint64_t, Merge> merges_;  // key (left id << 32) | right id
  StringMap<std::pair<std::string, std::string>> reverse_;
};

// read_vocabulary: "word count" lines; words with count >= threshold (all without one).
StringSet read_bpe_vocabulary(const std::string& path, std::optional<int64_t> threshold);
StringSet parse_bpe_vocabulary(std::string_view text, const std::string& name, std::optional<int64_t> threshold);

struct BpeApplyOptions {
  std::string separator = "@@";
  std::vector<std::string> glossaries;  // regexes in Python's syntax (GlossaryRegex)
  StringSet vocabulary;                 // empty: no vocabulary filter (as upstream's `if vocab:`)
};

// A regex made from --glossaries, in the three uses subword-nmt makes of Python's re. ICU
// compiles it after python_regex_to_icu, with '\n' as the only line end as in Python; what
// still differs is rare (case-insensitive matching of a few characters, Unicode versions), and
// so is a split where a pattern prefers an empty match to a longer one at the same place. ICU keeps its
// backtracking on the heap and bounds it (std::regex recursed once per character and crashed on a
// 30,000-character word): a match that backtracks too long, like (a+)+c on 25 letters, or too
// deep is a DataError naming `label` (the glossary), never a hang or a crash.
class GlossaryRegex {
 public:
  GlossaryRegex(const std::string& regex, std::string label);  // DataError if the regex is invalid
  // re.match, re.search and re.split on UTF-8 text, for one thread (bpe_apply.cpp).
  class Matcher;

 private:
  std::shared_ptr<const icu::RegexPattern> pattern_;
  std::string label_;
};

// One --glossaries regex, compiled the three ways isolate_glossary uses it.
struct GlossaryPattern {
  explicit GlossaryPattern(const std::string& glossary);  // DataError if the regex is invalid
  // g, '^' + g + '$', '(' + g + ')': g first, so that a bad glossary is reported as typed.
  GlossaryRegex anywhere, whole, captured;
};
// isolate_glossary(word, glossary): splits `word` around the matches of one glossary regex.
std::vector<std::string> isolate_glossary(const std::string& word, const GlossaryPattern& glossary);

class BpeEncoder {
 public:
  BpeEncoder(BpeCodes codes, BpeApplyOptions options);

  // _isolate_glossaries: the word split around the matches of every glossary, in order.
  std::vector<std::string> isolate_glossaries(std::string_view word) const;
  // Segments of one word (without separators), after glossaries, merges and vocabulary.
  std::vector<std::string> segment_word(std::string_view word) const;
  // process_line: leading/trailing '\r\n ' kept, words joined by ' ', "@@" on non-final parts.
  std::string process_line(std::string_view line) const;
  // All lines, in order, processed in parallel (OpenMP), each thread with its own word cache.
  std::string apply(const TextLines& text) const;

 private:
  class Workspace;  // one thread's glossary matchers and word cache
  std::string process_line(std::string_view line, Workspace& workspace) const;
  const std::string& segment_word_cached(std::string_view word, Workspace& workspace) const;
  std::vector<std::string> segment_word(std::string_view word, Workspace& workspace) const;
  std::vector<std::string> isolate_glossaries(std::string_view word, Workspace& workspace) const;
  std::vector<std::string> encode(std::string_view segment, Workspace& workspace) const;
  std::vector<std::string> check_vocabulary(const std::vector<std::string>& segments) const;
  void recursive_split(const std::string& segment, bool final, std::vector<std::string>& out) const;
  bool in_vocabulary(const std::string& subword, bool final) const;

  BpeCodes codes_;
  BpeApplyOptions options_;
  std::vector<GlossaryPattern> glossary_patterns_;
  std::optional<GlossaryRegex> any_glossary_;  // ^(g1|g2|...)$
};

}  // namespace attn::data
