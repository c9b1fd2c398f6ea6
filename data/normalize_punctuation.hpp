// Moses normalize-punctuation.perl [-penn] -l LANG (docs/mt-tools.md §2.5), the first step of
// fairseq's prepare-wmt14en2de.sh on the training corpora (§1.5 A). The script works on the
// bytes of each line (no UTF-8 decoding): `\d` is [0-9], `[a-z]` with /i is the ASCII
// letters, `\s` is one of the bytes \t \n \v \f \r and space, and the "pseudo-space" rules
// match the two bytes of U+00A0 NO-BREAK SPACE. Rules, in the script's order:
//   spaces around brackets and before : ; %   ( → " (", ) → ") ", runs of spaces → one, ...
//   quotes and dashes                        `` ` ´ → ', '' „ “ ” → ", – → -, — → " - "
//   apostrophes                              a’b a‘b → a'b (ASCII letters), ‘ ‚ → ', ’ → "
//   French quotes and pseudo-spaces          « » with NBSP → ", NBSP before % : ? ! ; → removed
//   language quote style                     en: "., → .," ; cs/cz: none ; others: ," → ",
//                                            and ."X → ".X
//   digits around NBSP                       de es fr cs cz: 1⍽000 → 1,000 ; others 1.000
#pragma once
#include <string>
#include <string_view>

namespace attn::data {

struct NormalizePunctuationOptions {
  std::string language = "en";  // any code: en, cs/cz and de/es/fr select rules, the rest as "other"
  bool penn = false;            // -penn: keep ` and '' (Penn Treebank quotes)
};

class PunctuationNormalizer {
 public:
  explicit PunctuationNormalizer(const NormalizePunctuationOptions& options = {});

  // One record as the script reads it: a line with its '\n' (the last line may lack it).
  // The '\n' takes part in the matching (the "period before closing quote" rule of the
  // non-English branch sees it) and is kept.
  std::string normalize_record(std::string_view record) const;

 private:
  enum class QuoteStyle { English, Czech, Other };
  QuoteStyle quote_style_;
  char digit_group_separator_;  // what replaces NBSP between two digits
  bool penn_;
};

}  // namespace attn::data
