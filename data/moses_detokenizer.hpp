// Moses detokenizer: a byte-exact port of detokenizer.perl (mosesdecoder 3445289) for
// every language (docs/mt-tools.md §2.4): " @-@ " joined, entities decoded, then each token
// attached to its left or right neighbour by the script's rules (CJK runs, currency and
// opening brackets, closing punctuation, English contractions and possessives, alternating
// quotes, and the rules of fr, it, cs, fi and ko).
#pragma once
#include <string>
#include <string_view>

#include "data/moses_tokenizer.hpp"

namespace attn::data {

class MosesDetokenizer {
 public:
  explicit MosesDetokenizer(MosesLanguage language = MosesLanguage::English);

  // The detokenized text of one line (given without its '\n'). Lines of whitespace only and
  // lines like "<tag>" (/^<.+>$/) are returned unchanged, as the script prints them. Throws
  // DataError when the line is not valid UTF-8.
  std::string detokenize(std::string_view line) const;

  // Exactly what detokenizer.perl prints for one input record ($_, with its '\n' if any).
  std::string detokenize_record(std::string_view record) const;

 private:
  using Text = std::u32string;
  // Whether the script prints the line as it is (an XML-like tag line or a blank line).
  static bool passes_unchanged(const Text& line);
  Text join_tokens(const Text& text) const;

  MosesLanguage language_;
};

}  // namespace attn::data
