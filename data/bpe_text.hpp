// subword-nmt's text conventions, shared by BPE learning and applying (docs/mt-tools.md §1.1
// step 1, §1.4, §0 "Conventions"):
//   * which characters end a line depends on how subword-nmt opened the input: learn-bpe's
//     standard input is Python's own sys.stdin (only \n ends a line; a \r stays in it),
//     apply-bpe's is a text stream it wraps itself (universal newlines: \n, \r, \r\n, each
//     read as \n), `-i FILE` is read through `codecs` (str.splitlines boundaries, the
//     terminator kept as it is);
//   * a line is stripped of '\r', '\n' and ' ' at both ends and split into words on ' ' only;
//   * symbols are Unicode code points (UTF-8 decoded); Python's `\s` is the PyWS set.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "data/text_io.hpp"  // DataError

namespace attn::data {

// Hash maps and sets keyed by std::string that can be looked up with a std::string_view.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class T>
using StringMap = std::unordered_map<std::string, T, StringViewHash, std::equal_to<>>;
using StringSet = std::unordered_set<std::string, StringViewHash, std::equal_to<>>;

enum class LineMode {
  Newline,     // Python's sys.stdin on POSIX (learn-bpe's input): only \n ends a line
  Universal,   // Python text stream (apply-bpe's stdin): \n, \r, \r\n end a line and are read as "\n"
  SplitLines,  // codecs reader (-i FILE): str.splitlines boundaries, terminator kept verbatim
};

// Lines of a text as subword-nmt iterates them, each keeping its terminator (the last line
// may have none). `buffer` owns the bytes the views point into.
struct TextLines {
  std::string buffer;
  std::vector<std::string_view> lines;
};
TextLines split_lines(std::string text, LineMode mode);

// Reads a whole file (DataError naming it if it cannot be read) and checks it is UTF-8,
// reporting the 1-based line ('\n'-separated) of the first invalid byte.
std::string read_utf8_file(const std::string& path);
// Same checks for text that came from elsewhere (standard input); `name` labels errors.
void check_utf8_text(std::string_view text, const std::string& name);

// line.strip('\r\n ')
std::string_view strip_line(std::string_view line);
// line.strip('\r\n ').split(' ') without the empty strings (runs of spaces).
std::vector<std::string_view> split_words(std::string_view line);

// Byte length of the UTF-8 sequence starting with `lead` (1 for continuation/invalid bytes).
inline size_t utf8_char_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}
// Splits valid UTF-8 into one view per code point.
std::vector<std::string_view> split_code_points(std::string_view word);
// Number of code points in valid UTF-8.
size_t count_code_points(std::string_view s);
// Python str.isspace() / re `\s` for one code point (the PyWS set of docs/mt-tools.md §0).
bool is_python_space(char32_t c);
// Decodes the code point starting at s[pos] (valid UTF-8 assumed).
char32_t decode_code_point(std::string_view s, size_t pos);
// Whether any code point of s is PyWS.
bool contains_python_space(std::string_view s);

}  // namespace attn::data
