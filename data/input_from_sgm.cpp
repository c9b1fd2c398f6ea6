// input-from-sgm.perl on bytes (docs/mt-tools.md §2.5); the header lists the rules.
#include "data/input_from_sgm.hpp"

#include <algorithm>
#include <istream>
#include <optional>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {
namespace {

constexpr std::string_view kOpenTagStart = "<seg", kCloseTag = "</seg>";

bool equal_ignoring_ascii_case(char a, char b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  return lower(a) == lower(b);
}

// Position of the first (or last) occurrence of `needle` at or after `from`, ignoring ASCII case.
size_t find_ignoring_case(std::string_view text, std::string_view needle, size_t from = 0) {
  if (from > text.size()) return std::string_view::npos;
  auto it = std::search(text.begin() + from, text.end(), needle.begin(), needle.end(), equal_ignoring_ascii_case);
  return it == text.end() ? std::string_view::npos : size_t(it - text.begin());
}

size_t rfind_ignoring_case(std::string_view text, std::string_view needle) {
  auto it = std::find_end(text.begin(), text.end(), needle.begin(), needle.end(), equal_ignoring_ascii_case);
  return it == text.end() ? std::string_view::npos : size_t(it - text.begin());
}

bool is_byte_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// End (one past '>') of each opening tag `<seg[^>]+>` of the line, in order; tag ends never
// decrease, so the first is where the segment starts and the last decides "ends with a tag".
std::vector<size_t> opening_tag_ends(std::string_view line) {
  std::vector<size_t> ends;
  for (size_t start = find_ignoring_case(line, kOpenTagStart); start != std::string_view::npos;
       start = find_ignoring_case(line, kOpenTagStart, start + 1)) {
    size_t close = line.find('>', start + kOpenTagStart.size());
    if (close == std::string_view::npos) break;
    if (close > start + kOpenTagStart.size()) ends.push_back(close + 1);
  }
  return ends;
}

// /<seg[^>]+>\s*$/: the line ends with an opening tag and spaces.
bool ends_with_opening_tag(std::string_view line) {
  auto ends = opening_tag_ends(line);
  return !ends.empty() && std::all_of(line.begin() + ends.back(), line.end(), is_byte_space);
}

// /<seg[^>]+>\s*(.*)\s*<\/seg>/: the raw text of the segment when the line holds a whole one.
std::optional<std::string_view> segment_text(std::string_view line) {
  auto ends = opening_tag_ends(line);
  if (ends.empty()) return std::nullopt;
  size_t close = rfind_ignoring_case(line, kCloseTag);
  if (close == std::string_view::npos || close < ends.front()) return std::nullopt;
  return line.substr(ends.front(), close - ends.front());
}

// s/\s+/ /g; s/^ //; s/ $//
std::string squeeze_and_trim(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (!is_byte_space(c)) out.push_back(c);
    else if (out.empty() || out.back() != ' ') out.push_back(' ');
  }
  if (!out.empty() && out.front() == ' ') out.erase(0, 1);
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

class SgmLineReader {
 public:
  SgmLineReader(std::istream& in, const std::string& source_name) : in_(in), source_name_(source_name) {}

  bool next(std::string& line) {
    if (!std::getline(in_, line)) return false;
    check_utf8(line, source_name_, ++line_number_);
    return true;
  }
  size_t line_number() const { return line_number_; }

 private:
  std::istream& in_;
  const std::string& source_name_;
  size_t line_number_ = 0;
};

}  // namespace

std::vector<std::string> read_sgm_segments(std::istream& in, const std::string& source_name) {
  SgmLineReader reader(in, source_name);
  std::vector<std::string> segments;
  std::string line, continuation;
  while (reader.next(line)) {
    const size_t first_line = reader.line_number();
    auto append_next_line = [&] {
      if (!reader.next(continuation))
        throw DataError(fmt::format("{}:{}: <seg> not closed by </seg> before the end of the input", source_name,
                                    first_line));
      line += continuation;
    };
    // The script's two loops, in its order: first while a tag ends the line, then while a
    // tag has no </seg> after it.
    while (ends_with_opening_tag(line)) append_next_line();
    while (!opening_tag_ends(line).empty() && !segment_text(line)) append_next_line();
    if (auto text = segment_text(line)) segments.push_back(squeeze_and_trim(*text));
  }
  return segments;
}

}  // namespace attn::data
