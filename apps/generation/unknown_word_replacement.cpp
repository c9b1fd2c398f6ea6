// See unknown_word_replacement.hpp.
#include "apps/generation/unknown_word_replacement.hpp"

#include <fstream>

#include <fmt/core.h>

#include "apps/generation/attention_alignment.hpp"
#include "core/error.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

// The positions of the tokens that are neither <pad> nor </s>: the alignment's indices count them.
std::vector<size_t> word_positions(const std::vector<int64_t>& tokens) {
  std::vector<size_t> positions;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] != data::Dictionary::kPad && tokens[i] != data::Dictionary::kEos) positions.push_back(i);
  return positions;
}

}  // namespace

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
                                            const std::vector<std::string>& source_symbols,
                                            const data::Dictionary& target) const {
  ATTN_CHECK(source_symbols.size() + 1 == source.size(), "replace-unk: {} source symbols for {} ids (</s> included)",
             source_symbols.size(), source.size());
  std::vector<std::string> symbols;
  for (int64_t id : h.tokens)
    if (id != data::Dictionary::kBos && id != data::Dictionary::kPad && id != data::Dictionary::kEos)
      symbols.push_back(target.symbol(int32_t(id)));
  const std::vector<size_t> source_position = word_positions(source), target_position = word_positions(h.tokens);
  for (const AlignedPair& pair :
       hard_alignment(h.attention, source, h.tokens, data::Dictionary::kPad, data::Dictionary::kEos)) {
    const size_t t = size_t(pair.target);  // h.tokens holds no <s> or <pad>: symbol t is target word t
    if (h.tokens[target_position[t]] != data::Dictionary::kUnk) continue;
    const std::string& aligned = source_symbols[source_position[size_t(pair.source)]];
    const auto entry = dictionary_.find(aligned);
    symbols[t] = entry == dictionary_.end() ? aligned : entry->second;
  }
  std::string text;
  for (const std::string& symbol : symbols) text += (text.empty() ? "" : " ") + symbol;
  return text;
}

}  // namespace attn::app
