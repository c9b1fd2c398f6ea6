// Moses non-breaking prefixes (docs/mt-tools.md §2.3, "Non-breaking prefix files"): words
// such as "Mr" or "z.B" whose final period does not end a sentence. The lists of every language
// Moses has one for (data/resources/nonbreaking_prefix.*) are compiled into the program, so it
// reads no files at run time.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::data {

enum class PrefixKind : uint8_t {
  None,         // not a prefix: "word." ends a sentence
  Always,       // "Mr." never ends a sentence
  NumericOnly,  // "No." does not end a sentence when a digit follows ("No. 5")
};

class NonbreakingPrefixes {
 public:
  // Parses a prefix file the way tokenizer.perl's load_prefixes does: each line chomped;
  // empty lines, "0" (false in Perl) and lines starting with '#' skipped; "X #NUMERIC_ONLY#"
  // (after whitespace) -> NumericOnly for X, otherwise the whole line -> Always.
  static NonbreakingPrefixes parse(std::string_view content);
  // The built-in list for a language code ("fr", "tdt"); a code without one gets the English
  // list, as tokenizer.perl does when it finds no file nonbreaking_prefix.CODE.
  static const NonbreakingPrefixes& builtin(std::string_view language);
  // Whether `language` has a list of its own built in (exact, case-sensitive code).
  static bool has_builtin(std::string_view language);
  // The codes that have a list, sorted.
  static std::vector<std::string> builtin_languages();

  PrefixKind kind(std::string_view word) const;
  size_t size() const { return kinds_.size(); }

 private:
  std::unordered_map<std::string, PrefixKind> kinds_;
};

}  // namespace attn::data
