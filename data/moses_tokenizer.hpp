// Moses tokenizer: a byte-exact port of tokenizer.perl (mosesdecoder 3445289, non-Penn mode)
// for English, German and languages without special rules. docs/mt-tools.md §2.1-§2.3: the
// line loop (§2.2) and the seventeen rules of tokenize() in the script's order (§2.3).
// Legacy2018 reproduces the script before 2018-11-07 (commit 9fc964da7), whose last word keeps
// its final period when it is a non-breaking prefix (== sacremoses 0.1.1 on the WMT17 data).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "data/nonbreaking_prefixes.hpp"

namespace attn::data {

// The language-dependent parts of the Moses scripts that attnlab implements.
enum class MosesLanguage {
  English,  // English apostrophe rules and prefixes
  German,   // every apostrophe split off; German prefixes
  Other,    // as German, with the English prefix list (tokenizer.perl's fallback)
};

// "en" -> English, "de" -> German, anything else -> Other.
MosesLanguage parse_moses_language(std::string_view code);

struct MosesTokenizerOptions {
  MosesLanguage language = MosesLanguage::English;
  bool aggressive_hyphen_splitting = false;  // -a: "a-b" -> "a @-@ b"
  bool escape = true;                        // off: -no-escape
  bool legacy2018 = false;                   // the final-period rule before 2018-11
};

class MosesTokenizer {
 public:
  explicit MosesTokenizer(MosesTokenizerOptions options = {});

  // The tokens of one line (given without its '\n'), separated by single spaces. A line of
  // whitespace only is returned unchanged, as the script prints it. Throws DataError when
  // the line is not valid UTF-8.
  std::string tokenize(std::string_view line) const;

  // Exactly what tokenizer.perl prints for one input record ($_: a line with its '\n', or
  // the file's last line without one): tokenize() + "\n", or a blank record unchanged.
  std::string tokenize_record(std::string_view record) const;

 private:
  using Text = std::u32string;
  // Rules 1-15 of §2.3 on the decoded line (escaping happens when encoding the result).
  Text tokenize_text(Text text) const;
  // Rule 11: the word loop deciding which final periods are split off.
  Text split_final_periods(const Text& text) const;
  bool keeps_final_period(const std::vector<std::u32string_view>& words, size_t i) const;

  MosesTokenizerOptions options_;
  const NonbreakingPrefixes& prefixes_;
};

}  // namespace attn::data
