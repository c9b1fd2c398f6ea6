#include "data/alignment_dictionary.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {
namespace {

// How often each target word was aligned to one source word, in the order first seen.
using TargetCounts = std::vector<std::pair<int32_t, int64_t>>;

// "i-j" as two positions; none for anything else.
std::optional<std::pair<size_t, size_t>> parse_pair(std::string_view text) {
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  size_t source = 0, target = 0;
  const std::string_view left = text.substr(0, dash), right = text.substr(dash + 1);
  const auto [end_left, error_left] = std::from_chars(left.data(), left.data() + left.size(), source);
  const auto [end_right, error_right] = std::from_chars(right.data(), right.data() + right.size(), target);
  if (left.empty() || right.empty() || error_left != std::errc() || error_right != std::errc() ||
      end_left != left.data() + left.size() || end_right != right.data() + right.size())
    return std::nullopt;
  return std::pair{source, target};
}

// The id of the word at `position` of an encoded line (whose last id is </s>); throws for a
// position past the words, or a word that is a special symbol's text (fairseq asserts).
int32_t word_at(const EncodedLine& encoded, size_t position, const std::string& alignment_path, size_t line,
                const std::string& path, const char* side) {
  const size_t words = encoded.ids.size() - 1;
  if (position >= words)
    throw DataError(fmt::format("{}:{}: {} position {} is past the {} words of line {} of {}", alignment_path, line,
                                side, position, words, line, path));
  const int32_t id = encoded.ids[position];
  if (id == Dictionary::kPad || id == Dictionary::kEos)
    throw DataError(fmt::format("{}:{}: word {} of line {} of {} is a special symbol's text ({})", alignment_path, line,
                                position, line, path, id == Dictionary::kPad ? "<pad>" : "</s>"));
  return id;
}

}  // namespace

std::string alignment_dictionary_text(const std::string& alignment_path, const std::vector<std::string>& source_lines,
                                      const std::string& source_path, const std::vector<std::string>& target_lines,
                                      const std::string& target_path, const Dictionary& source_dict,
                                      const Dictionary& target_dict) {
  const std::vector<std::string> alignments = read_lines(alignment_path);
  if (alignments.size() != source_lines.size() || alignments.size() != target_lines.size())
    throw DataError(fmt::format("{} has {} lines but {} has {} and {} has {}: one alignment line per training pair",
                                alignment_path, alignments.size(), source_path, source_lines.size(), target_path,
                                target_lines.size()));
  std::vector<int32_t> source_order;  // source words in the order first seen
  std::unordered_map<int32_t, TargetCounts> counts;
  for (size_t line = 0; line < alignments.size(); ++line) {
    const EncodedLine source = source_dict.encode_line(source_lines[line]);
    const EncodedLine target = target_dict.encode_line(target_lines[line]);
    std::istringstream pairs(alignments[line]);
    for (std::string text; pairs >> text;) {
      const auto positions = parse_pair(text);
      if (!positions)
        throw DataError(fmt::format("{}:{}: '{}' is not an alignment pair 'i-j' (source and target word positions)",
                                    alignment_path, line + 1, text));
      const int32_t s = word_at(source, positions->first, alignment_path, line + 1, source_path, "source");
      const int32_t t = word_at(target, positions->second, alignment_path, line + 1, target_path, "target");
      if (s == Dictionary::kUnk || t == Dictionary::kUnk) continue;
      auto [entry, first_time] = counts.try_emplace(s);
      if (first_time) source_order.push_back(s);
      auto known =
          std::find_if(entry->second.begin(), entry->second.end(), [&](const auto& c) { return c.first == t; });
      if (known == entry->second.end())
        entry->second.emplace_back(t, 1);
      else
        ++known->second;
    }
  }
  std::string text;
  for (const int32_t s : source_order) {
    const TargetCounts& targets = counts.at(s);
    const auto* best = &targets.front();
    for (const auto& candidate : targets)
      if (candidate.second > best->second) best = &candidate;  // the first of equals stays, as Python's max
    text += source_dict.symbol(s) + " " + target_dict.symbol(best->first) + "\n";
  }
  return text;
}

}  // namespace attn::data
