// fairseq's --replace-unk (Luong et al. 2015, "Addressing the Rare Word Problem in Neural
// Machine Translation", §3's copy model without its position tokens): each <unk> of a
// translation becomes the source symbol aligned to it — the one its cross-attention weighs most,
// as the A- lines align them (attention_alignment.hpp) — or, with an alignment dictionary, that
// symbol's entry there (the symbol itself when it has none). The symbols are the model's, before
// BPE is removed, so a copied piece joins its neighbours as any other (docs/models.md §1.10.7).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/dictionary.hpp"
#include "nn/search/hypothesis.hpp"

namespace attn::app {

class UnknownWordReplacement {
 public:
  // Without a dictionary: each <unk> becomes the source symbol itself.
  UnknownWordReplacement() = default;
  // fairseq's alignment dictionary: per line a source symbol and its replacement, separated by
  // whitespace (further columns ignored, a later line for the same symbol wins); throws naming
  // the file and line of one with fewer than two.
  static UnknownWordReplacement read(const std::string& file);
  // fairseq's --replace-unk [DICT]: none when not given, copying when given alone (`dictionary`
  // empty), else read(dictionary).
  static std::optional<UnknownWordReplacement> from_flag(bool given, const std::string& dictionary);

  // The symbols of hypothesis h (its attention kept), joined by spaces as Dictionary::decode
  // joins them, each <unk> replaced. `source`: the source's ids as searched (</s> last);
  // `source_symbols`: the text they were looked up from, one whitespace-separated symbol per id
  // before the </s>. An <unk> aligned to nothing (a source of </s> alone) stays.
  std::string replace(const nn::Hypothesis& h, const std::vector<int64_t>& source, std::string_view source_symbols,
                      const data::Dictionary& target) const;

 private:
  std::unordered_map<std::string, std::string> dictionary_;
};

}  // namespace attn::app
