// See unknown_word_replacement.hpp.
#include "apps/generation/unknown_word_replacement.hpp"

#include <fstream>

#include <fmt/core.h>

#include "apps/generation/attention_alignment.hpp"
#include "core/error.hpp"
#include "data/text_io.hpp"

namespace attn::app {

UnknownWordReplacement UnknownWordReplacement::read(const std::string& file) {
  std::ifstream in = data::open_input_file(file);
  UnknownWordReplacement replacement;
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::vector<std::string_view> columns = data::split_on_whitespace(line);
    if (columns.size() < 2)
      throw Error(fmt::format("{}:{}: expected a source symbol and its replacement, separated by whitespace; got '{}'",
                              file, number, line));
    replacement.dictionary_[std::string(columns[0])] = std::string(columns[1]);
  }
  data::check_read(in, file);
  return replacement;
}

std::optional<UnknownWordReplacement> UnknownWordReplacement::from_flag(bool given, const std::string& dictionary) {
  if (!given) return std::nullopt;
  return dictionary.empty() ? UnknownWordReplacement() : read(dictionary);
}

std::string UnknownWordReplacement::replace(const nn::Hypothesis& h, const std::vector<int64_t>& source,
                                            std::string_view source_symbols, const data::Dictionary& target) const {
  const std::vector<std::string_view> source_words = data::split_on_whitespace(source_symbols);
  ATTN_CHECK(source_words.size() + 1 == source.size(), "replace-unk: {} source symbols for {} ids (</s> included)",
             source_words.size(), source.size());
  const std::vector<int64_t> attended =
      attended_source_positions(h.attention, source, h.tokens, data::Dictionary::kPad, data::Dictionary::kEos);
  std::string text;
  for (size_t t = 0; t < h.tokens.size(); ++t) {
    const int64_t id = h.tokens[t];
    if (id == data::Dictionary::kBos || id == data::Dictionary::kPad || id == data::Dictionary::kEos) continue;
    std::string symbol = target.symbol(int32_t(id));
    if (id == data::Dictionary::kUnk && attended[t] >= 0) {
      const std::string aligned(source_words[size_t(attended[t])]);
      const auto entry = dictionary_.find(aligned);
      symbol = entry == dictionary_.end() ? aligned : entry->second;
    }
    text += (text.empty() ? "" : " ") + symbol;
  }
  return text;
}

}  // namespace attn::app
