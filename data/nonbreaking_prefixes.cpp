#include "data/nonbreaking_prefixes.hpp"

#include <map>
#include <span>
#include <utility>

#include "data/perl_unicode.hpp"

namespace attn::data {

namespace embedded {
// Defined in the file data/CMakeLists.txt generates from data/resources/: (language code,
// content of nonbreaking_prefix.CODE) for every list.
extern const std::span<const std::pair<std::string_view, std::string_view>> nonbreaking_prefix_lists;
}  // namespace embedded

namespace {

constexpr std::string_view kNumericOnlyMarker = "#NUMERIC_ONLY#";

// Perl: /(.*)[\s]+(\#NUMERIC_ONLY\#)/. The greedy (.*) makes $1 everything before the last
// whitespace character that is followed by the marker. Returns npos when the line has none.
size_t numeric_only_key_length(std::string_view line) {
  const std::u32string chars = perl::decode_utf8(line, "non-breaking prefix list");
  const std::u32string marker(kNumericOnlyMarker.begin(), kNumericOnlyMarker.end());
  for (size_t i = chars.size(); i-- > 0;) {
    if (perl::is_space(chars[i]) && std::u32string_view(chars).substr(i + 1).starts_with(marker))
      return perl::encode_utf8(std::u32string_view(chars).substr(0, i)).size();
  }
  return std::string_view::npos;
}

}  // namespace

NonbreakingPrefixes NonbreakingPrefixes::parse(std::string_view content) {
  NonbreakingPrefixes prefixes;
  while (!content.empty()) {
    size_t end = content.find('\n');
    std::string_view line = content.substr(0, end);
    content = end == std::string_view::npos ? std::string_view{} : content.substr(end + 1);
    if (line.empty() || line == "0" || line.front() == '#') continue;
    size_t key_length = numeric_only_key_length(line);
    if (key_length != std::string_view::npos)
      prefixes.kinds_[std::string(line.substr(0, key_length))] = PrefixKind::NumericOnly;
    else
      prefixes.kinds_[std::string(line)] = PrefixKind::Always;
  }
  return prefixes;
}

namespace {

// Every built-in list, parsed once on first use (all of them take well under a millisecond).
const std::map<std::string, NonbreakingPrefixes, std::less<>>& builtin_lists() {
  static const auto lists = [] {
    std::map<std::string, NonbreakingPrefixes, std::less<>> parsed;
    for (const auto& [language, content] : embedded::nonbreaking_prefix_lists)
      parsed.emplace(language, NonbreakingPrefixes::parse(content));
    return parsed;
  }();
  return lists;
}

}  // namespace

const NonbreakingPrefixes& NonbreakingPrefixes::builtin(std::string_view language) {
  const auto& lists = builtin_lists();
  auto it = lists.find(language);
  return it != lists.end() ? it->second : lists.at("en");
}

bool NonbreakingPrefixes::has_builtin(std::string_view language) { return builtin_lists().contains(language); }

std::vector<std::string> NonbreakingPrefixes::builtin_languages() {
  std::vector<std::string> languages;
  for (const auto& entry : builtin_lists()) languages.push_back(entry.first);
  return languages;
}

PrefixKind NonbreakingPrefixes::kind(std::string_view word) const {
  auto it = kinds_.find(std::string(word));
  return it == kinds_.end() ? PrefixKind::None : it->second;
}

}  // namespace attn::data
