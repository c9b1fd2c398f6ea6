// Moses tokenizer: a byte-exact port of tokenizer.perl (mosesdecoder 3445289, non-Penn mode),
// language rules included (fr it ga ca, fi sv, so tdt). docs/mt-tools.md §2.1-§2.3: the
// line loop (§2.2) and the seventeen rules of tokenize() in the script's order (§2.3).
// Legacy2018 reproduces the script before 2018-11-07 (commit 9fc964da7), whose last word keeps
// its final period when it is a non-breaking prefix (== sacremoses 0.1.1 on the WMT17 data).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "data/nonbreaking_prefixes.hpp"

namespace attn::data {

// The languages whose rules differ in the Moses scripts that attnlab implements.
enum class MosesLanguage {
  English,  // English apostrophe rules and prefixes; English contractions when detokenizing
  German,   // every apostrophe split off; German prefixes
  Other,    // as German, with the English prefix list (tokenizer.perl's fallback)
  French,   // fr: apostrophes split to the left ("l'homme" -> "l' homme"); detokenizer: a space
            //     before ? ! : ; \ %, left contractions joined
  Italian,  // it: as French, without the detokenizer's space before punctuation
  Irish,    // ga: apostrophes as French
  Catalan,  // ca: apostrophes as French; "·" and "Â" not padded, "Â·" padded unless a
            //     lowercase letter follows (the script's middle dot, read as Latin-1)
  Czech,    // cs: detokenizer joins "3 , 14", "je - li", "e - mail" and treats „ as opening quote
  Finnish,  // fi: a colon before a lowercase letter stays in the word ("EU:ssa"); detokenizer
            //     joins case endings after a colon
  Swedish,  // sv: the tokenizer's colon rule of Finnish
  Somali,   // so: apostrophes between letters stay ("ba'an")
  Tetun,    // tdt: as Somali, and an apostrophe before a lowercase letter stays in the word
  Korean,   // ko: the detokenizer does not join CJK tokens
};

// Maps a language code to its rules: "en", "de", "fr", "it", "ga", "ca", "cs", "fi", "sv",
// "so", "tdt", "ko"; anything else -> Other. The non-breaking prefix list is chosen by the
// code itself (MosesTokenizerOptions::prefix_language), since many codes share rules (es, pt,
// nl, ... are all Other) but each has a list of its own.
MosesLanguage parse_moses_language(std::string_view code);
// The codes parse_moses_language knows, for command-line checks.
std::vector<std::string> moses_language_codes();

struct MosesTokenizerOptions {
  MosesLanguage language = MosesLanguage::English;
  // The -l code whose non-breaking prefix list is used ("es" has Other's rules and a list of
  // its own). Empty: the code of `language` ("fr" for French; Other -> English). A code
  // without a list gets the English one, as in tokenizer.perl.
  std::string prefix_language = {};
  bool aggressive_hyphen_splitting = false;  // -a: "a-b" -> "a @-@ b"
  bool escape = true;                        // off: -no-escape
  bool legacy2018 = false;                   // the final-period rule before 2018-11
};

// The options of `tokenizer.perl -l CODE`: the code's rules and its own prefix list.
MosesTokenizerOptions moses_tokenizer_options(std::string_view code);

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
  // Rules 6 and 10, whose patterns depend on the language.
  Text pad_special_characters_for_language(const Text& text) const;
  Text split_apostrophes_for_language(Text text) const;
  // Rule 11: the word loop deciding which final periods are split off.
  Text split_final_periods(const Text& text) const;
  bool keeps_final_period(const std::vector<std::u32string_view>& words, size_t i) const;

  MosesTokenizerOptions options_;
  const NonbreakingPrefixes& prefixes_;
};

}  // namespace attn::data
