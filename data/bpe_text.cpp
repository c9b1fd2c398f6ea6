// subword-nmt's line, word and character conventions (docs/mt-tools.md §1.4, §0).
#include "data/bpe_text.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {

namespace {

// Length of the str.splitlines line boundary starting at text[i], 0 when there is none.
size_t splitlines_boundary(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0; };
  switch (byte(i)) {
    case '\r': return byte(i + 1) == '\n' ? 2 : 1;
    case '\n': case 0x0B: case 0x0C: case 0x1C: case 0x1D: case 0x1E: return 1;
    case 0xC2: return byte(i + 1) == 0x85 ? 2 : 0;                                    // U+0085
    case 0xE2: return byte(i + 1) == 0x80 && (byte(i + 2) == 0xA8 || byte(i + 2) == 0xA9) ? 3 : 0;  // U+2028/9
    default: return 0;
  }
}

// Python's universal newlines: "\r\n" and "\r" become "\n".
std::string translate_newlines(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') { out.push_back(text[i]); continue; }
    out.push_back('\n');
    if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
  }
  return out;
}

bool is_strip_char(char c) { return c == '\r' || c == '\n' || c == ' '; }

}  // namespace

TextLines split_lines(std::string text, LineMode mode) {
  TextLines result;
  result.buffer = mode == LineMode::Universal ? translate_newlines(std::move(text)) : std::move(text);
  std::string_view all = result.buffer;
  size_t start = 0;
  for (size_t i = 0; i < all.size();) {
    size_t boundary = mode == LineMode::SplitLines ? splitlines_boundary(all, i) : (all[i] == '\n' ? 1 : 0);
    if (boundary == 0) { ++i; continue; }
    result.lines.push_back(all.substr(start, i + boundary - start));
    i += boundary;
    start = i;
  }
  if (start < all.size()) result.lines.push_back(all.substr(start));
  return result;
}

void check_utf8_text(std::string_view text, const std::string& name) {
  size_t bad = find_invalid_utf8(text);
  if (bad == std::string_view::npos) return;
  // rfind(c, npos) searches the whole text, so the first byte has no newline before it.
  const size_t newline_before = bad == 0 ? std::string_view::npos : text.rfind('\n', bad - 1);
  const size_t line_start = newline_before == std::string_view::npos ? 0 : newline_before + 1;
  const size_t line = 1 + size_t(std::count(text.begin(), text.begin() + ptrdiff_t(line_start), '\n'));
  throw DataError(fmt::format("{}:{}: invalid UTF-8 at byte {}", name, line, bad - line_start + 1));
}

std::string read_utf8_file(const std::string& path) {
  std::ifstream in = open_input_file(path);
  std::ostringstream content;
  content << in.rdbuf();
  check_read(in, path);
  std::string text = std::move(content).str();
  check_utf8_text(text, path);
  return text;
}

std::string_view strip_line(std::string_view line) {
  size_t begin = 0, end = line.size();
  while (begin < end && is_strip_char(line[begin])) ++begin;
  while (end > begin && is_strip_char(line[end - 1])) --end;
  return line.substr(begin, end - begin);
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::string_view text = strip_line(line);
  std::vector<std::string_view> words;
  size_t start = 0;
  while (start <= text.size()) {
    size_t space = text.find(' ', start);
    if (space == std::string_view::npos) space = text.size();
    if (space > start) words.push_back(text.substr(start, space - start));
    start = space + 1;
  }
  return words;
}

std::vector<std::string_view> split_code_points(std::string_view word) {
  std::vector<std::string_view> chars;
  for (size_t i = 0; i < word.size();) {
    size_t len = utf8_char_length(static_cast<unsigned char>(word[i]));
    chars.push_back(word.substr(i, len));
    i += len;
  }
  return chars;
}

size_t count_code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

char32_t decode_code_point(std::string_view s, size_t pos) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[pos + k]); };
  size_t len = utf8_char_length(byte(0));
  if (len == 1) return byte(0);
  char32_t c = byte(0) & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) c = (c << 6) | (byte(k) & 0x3F);
  return c;
}

bool contains_python_space(std::string_view s) {
  for (size_t i = 0; i < s.size(); i += utf8_char_length(static_cast<unsigned char>(s[i])))
    if (is_python_space(decode_code_point(s, i))) return true;
  return false;
}

}  // namespace attn::data
