// input-from-sgm.perl on bytes (docs/mt-tools.md §2.5); the header lists the rules.
#include "data/input_from_sgm.hpp"

#include <algorithm>
#include <istream>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {
namespace {

constexpr std::string_view kOpenTagStart = "<seg", kCloseTag = "</seg>";

bool equal_ignoring_ascii_case(char a, char b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  return lower(a) == lower(b);
}

// Position of the first occurrence of `needle` in text[from, to), ignoring ASCII case, or npos.
size_t find_ignoring_case(std::string_view text, std::string_view needle, size_t from, size_t to) {
  if (from > to) return std::string_view::npos;
  auto it =
      std::search(text.begin() + from, text.begin() + to, needle.begin(), needle.end(), equal_ignoring_ascii_case);
  return it == text.begin() + to ? std::string_view::npos : size_t(it - text.begin());
}

size_t find_ignoring_case(std::string_view text, std::string_view needle, size_t from) {
  return find_ignoring_case(text, needle, from, text.size());
}

// Position of the last occurrence of `needle` at or after `from`, ignoring ASCII case, or npos.
size_t rfind_ignoring_case(std::string_view text, std::string_view needle, size_t from) {
  auto it = std::find_end(text.begin() + from, text.end(), needle.begin(), needle.end(), equal_ignoring_ascii_case);
  return it == text.end() ? std::string_view::npos : size_t(it - text.begin());
}

bool is_byte_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// The opening tags /<seg[^>]+>/ of a line that grows at its end (continuation lines joined to
// it), each byte looked at a bounded number of times however many lines are joined. A tag ends
// at a '>' and starts at a "<seg" after the previous '>' ([^>]+ runs to the first '>'), with
// at least one byte between "<seg" and '>'; so each stretch between two '>' is searched once,
// when its '>' arrives.
class OpeningTags {
 public:
  // The end (one past the '>') of the next opening tag of `line`, or npos when the line holds
  // no other one yet.
  size_t next_end(std::string_view line) {
    for (size_t close; (close = line.find('>', scanned_)) != std::string_view::npos;) {
      const size_t start = find_ignoring_case(line, kOpenTagStart, stretch_start_, close);
      stretch_start_ = scanned_ = close + 1;
      if (start != std::string_view::npos && start + kOpenTagStart.size() < close) return close + 1;
    }
    scanned_ = line.size();
    return std::string_view::npos;
  }

 private:
  size_t stretch_start_ = 0;  // just after the last '>' seen
  size_t scanned_ = 0;        // no '>' in [stretch_start_, scanned_)
};

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
  const std::string& source_name() const { return source_name_; }

 private:
  std::istream& in_;
  const std::string& source_name_;
  size_t line_number_ = 0;
};

// A second opening tag in the lines of one segment: the script would output both segments, tags
// and all, as one line.
[[noreturn]] void throw_second_opening_tag(const SgmLineReader& reader, size_t first_line, bool first_closed) {
  const std::string where = fmt::format("{}:{}", reader.source_name(), reader.line_number());
  if (first_closed)
    throw DataError(fmt::format("{}: a second <seg> on the line (one segment per line: input-from-sgm.perl would "
                                "output both as one)",
                                where));
  const std::string opened =
      first_line == reader.line_number() ? std::string("earlier on the line") : fmt::format("on line {}", first_line);
  throw DataError(fmt::format("{}: <seg> opened inside the segment opened {}, which has no </seg> before it", where,
                              opened));
}

// The text of the segment whose opening tag ends at `text_start` of `line`: the script joins the
// following lines to it until a </seg> comes after that tag (its two loops, for a line with one
// opening tag), and takes the text up to the last </seg>. Every byte of the joined lines is
// searched a bounded number of times: re-searching the whole joined line for each line joined,
// as the script does, took half a minute on a segment of 200,000 lines.
std::string_view join_segment(SgmLineReader& reader, std::string& line, OpeningTags& tags, size_t text_start) {
  const size_t first_line = reader.line_number();
  std::string continuation;
  for (size_t close_from = text_start;;) {
    const size_t close = find_ignoring_case(line, kCloseTag, close_from);
    const size_t second_tag_end = tags.next_end(line);
    if (second_tag_end != std::string_view::npos) throw_second_opening_tag(reader, first_line, close < second_tag_end);
    if (close != std::string_view::npos)
      return std::string_view(line).substr(text_start, rfind_ignoring_case(line, kCloseTag, close) - text_start);
    if (!reader.next(continuation))
      throw DataError(fmt::format("{}:{}: <seg> not closed by </seg> before the end of the input",
                                  reader.source_name(), first_line));
    // A </seg> may begin in the bytes already searched and end in the continuation.
    close_from = std::max(text_start, line.size() - std::min(line.size(), kCloseTag.size() - 1));
    line += continuation;
  }
}

}  // namespace

std::vector<std::string> read_sgm_segments(std::istream& in, const std::string& source_name) {
  SgmLineReader reader(in, source_name);
  std::vector<std::string> segments;
  for (std::string line; reader.next(line);) {
    OpeningTags tags;
    const size_t text_start = tags.next_end(line);
    if (text_start != std::string_view::npos)
      segments.push_back(squeeze_and_trim(join_segment(reader, line, tags, text_start)));
  }
  return segments;
}

}  // namespace attn::data
