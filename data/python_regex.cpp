#include "data/python_regex.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "data/bpe_text.hpp"
#include "data/text_io.hpp"

namespace attn::data {

namespace {

// Python's `\s` and `\w` for str patterns as ICU sets (ICU's own \s leaves out U+001C–001F, its
// \w takes in combining marks and leaves out numbers like '²'): str.isspace(), and
// str.isalnum() (a letter, or a character with a numeric value) or '_'.
constexpr std::string_view kPythonSpace =
    R"([\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}])";
constexpr std::string_view kPythonWord = R"([\p{L}\P{Numeric_Type=None}_])";

std::string negated_set(std::string_view set) { return "[^" + std::string(set.substr(1)); }

// Python's \b and \B: a word character on exactly one side (the ends of the text are not).
std::string python_word_boundary(bool boundary) {
  const std::string w(kPythonWord);
  return boundary ? "(?:(?<=" + w + ")(?!" + w + ")|(?<!" + w + ")(?=" + w + "))"
                  : "(?:(?<=" + w + ")(?=" + w + ")|(?<!" + w + ")(?!" + w + "))";
}

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Rewrites a glossary, written for Python's re, into ICU's syntax with the same meaning where
// the two read a pattern differently: \s \S \w \W \b \B \v \Z, \x \u \U \0 escapes, `{` that
// is no quantifier (literal in Python, an error in ICU), `{,n}`, (?P<name>...) and (?P=name),
// and inside [...] every ASCII punctuation character, which Python takes literally and ICU may
// not ("[[:alpha:]]", "&&", "--"). Escapes that Python refuses (\p, \Q, \h, ...) are refused.
class PythonRegexTranslator {
 public:
  PythonRegexTranslator(std::string_view pattern, const std::string& label) : in_(pattern), label_(label) {}

  std::string translate() {
    while (pos_ < in_.size()) {
      const char c = in_[pos_++];
      if (c == '\\') out_ += escape(false);
      else if (c == '[') character_class();
      else if (c == '{') brace();
      else if (c == '}') out_ += "\\}";
      else if (c == '(') group();
      else if (c == ')') close_group();
      else if (c == '#' && verbose_) copy_through('\n', "#");
      else out_ += c;
    }
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(fmt::format("--glossaries '{}': invalid regex ({})", label_, what));
  }

  char next() const { return pos_ < in_.size() ? in_[pos_] : '\0'; }

  // A literal code point, spelled so that ICU reads it literally in and outside sets.
  static std::string literal(char32_t c) {
    if (c < 0x80 && (is_ascii_letter(static_cast<char>(c)) || is_digit(static_cast<char>(c))))
      return std::string(1, static_cast<char>(c));
    return fmt::format("\\x{{{:x}}}", static_cast<uint32_t>(c));
  }

  // \N{NAME} (pos_ after the N): the same in ICU.
  std::string named_character() {
    const size_t end = in_.find('}', pos_);
    if (next() != '{' || end == std::string_view::npos) fail("missing { or } after \\N");
    const size_t start = pos_;
    pos_ = end + 1;
    return "\\N" + std::string(in_.substr(start, pos_ - start));
  }

  // Reads `count` hex digits (exactly) after \x, \u or \U.
  char32_t hex_digits(size_t count, char letter) {
    if (pos_ + count > in_.size() ||
        !std::all_of(in_.begin() + pos_, in_.begin() + pos_ + count, is_hex_digit))
      fail(fmt::format("incomplete escape \\{}", letter));
    const uint32_t value = std::stoul(std::string(in_.substr(pos_, count)), nullptr, 16);
    pos_ += count;
    if (value > 0x10FFFF) fail(fmt::format("bad escape \\{}", letter));
    return value;
  }

  // The escape after a backslash (pos_ at the character after it), inside a set or not.
  std::string escape(bool in_set) {
    if (pos_ >= in_.size()) fail("bad escape (end of pattern)");
    const char c = in_[pos_];
    if (static_cast<unsigned char>(c) >= 0x80) {  // a non-ASCII character: itself
      const size_t length = utf8_char_length(static_cast<unsigned char>(c));
      pos_ += length;
      return std::string(in_.substr(pos_ - length, length));
    }
    ++pos_;
    switch (c) {
      case 's': return std::string(kPythonSpace);
      case 'S': return negated_set(kPythonSpace);
      case 'w': return std::string(kPythonWord);
      case 'W': return negated_set(kPythonWord);
      case 'd': return "\\d";  // Unicode decimal digits in both
      case 'D': return "\\D";
      case 'a': return literal(0x07);
      case 'f': return literal(0x0C);
      case 'n': return literal(0x0A);
      case 'r': return literal(0x0D);
      case 't': return literal(0x09);
      case 'v': return literal(0x0B);  // ICU's \v is a class of vertical spaces
      case 'x': return literal(hex_digits(2, c));
      case 'u': return literal(hex_digits(4, c));
      case 'U': return literal(hex_digits(8, c));
      case 'N': return named_character();
      case 'b': return in_set ? literal(0x08) : python_word_boundary(true);
      default: break;
    }
    if (!in_set && (c == 'A' || c == 'B' || c == 'Z'))
      return c == 'A' ? "\\A" : c == 'B' ? python_word_boundary(false) : "\\z";  // Python's \Z is ICU's \z
    if (is_digit(c)) return number_escape(c, in_set);
    if (is_ascii_letter(c)) fail(fmt::format("bad escape \\{}", c));
    return std::string("\\") + c;  // punctuation: itself
  }

  // \0, \12, \123: octal characters or (outside sets) a group reference, as Python decides.
  std::string number_escape(char first, bool in_set) {
    auto is_octal = [](char d) { return d >= '0' && d <= '7'; };
    std::string digits(1, first);
    const bool octal = first == '0' || in_set;
    if (octal && !is_octal(first)) fail(fmt::format("bad escape \\{}", first));
    if (octal) {
      while (digits.size() < 3 && is_octal(next())) digits += in_[pos_++];
    } else if (is_digit(next())) {
      digits += in_[pos_++];
      if (is_octal(digits[0]) && is_octal(digits[1]) && is_octal(next())) {
        digits += in_[pos_++];
        const uint32_t value = std::stoul(digits, nullptr, 8);
        if (value > 0377) fail(fmt::format("octal escape value \\{} outside of range 0-0o377", digits));
        return literal(value);
      }
    }
    if (octal) {
      const uint32_t value = std::stoul(digits, nullptr, 8);
      if (value > 0377) fail(fmt::format("octal escape value \\{} outside of range 0-0o377", digits));
      return literal(value);
    }
    return group_reference(digits);
  }

  // One item of a set: a literal (returned as a code point for ranges) or a class escape.
  struct SetItem {
    std::string text;
    std::optional<char32_t> code_point;  // set for literals
  };

  SetItem set_item() {
    const size_t start = pos_;
    const char c = in_[pos_++];
    if (c != '\\') {
      pos_ = start + utf8_char_length(static_cast<unsigned char>(c));
      const char32_t code_point = decode_code_point(in_, start);
      return {literal(code_point), code_point};
    }
    const char escaped = next();
    std::string text = escape(true);
    if (escaped == 'd' || escaped == 'D' || escaped == 's' || escaped == 'S' || escaped == 'w' || escaped == 'W')
      return {std::move(text), std::nullopt};
    if (escaped == 'N') return {std::move(text), std::nullopt};  // a named character: no ranges with it here
    return {std::move(text), decode_escaped_literal(start)};
  }

  // The code point of the literal escape that starts at in_[start] (a backslash).
  char32_t decode_escaped_literal(size_t start) const {
    const std::string_view escape_text = in_.substr(start + 1, pos_ - start - 1);
    const char c = escape_text[0];
    switch (c) {
      case 'a': return 0x07;
      case 'b': return 0x08;
      case 'f': return 0x0C;
      case 'n': return 0x0A;
      case 'r': return 0x0D;
      case 't': return 0x09;
      case 'v': return 0x0B;
      case 'x': case 'u': case 'U': return std::stoul(std::string(escape_text.substr(1)), nullptr, 16);
      default: break;
    }
    if (is_digit(c)) return std::stoul(std::string(escape_text), nullptr, 8);
    return decode_code_point(escape_text, 0);
  }

  // [...]: pos_ is after '['. A ']' right after '[' or '[^' is literal.
  void character_class() {
    out_ += '[';
    if (next() == '^') out_ += '^', ++pos_;
    const size_t first = pos_;
    for (;;) {
      if (pos_ >= in_.size()) fail("unterminated character set");
      if (in_[pos_] == ']' && pos_ != first) break;
      SetItem low = set_item();
      if (next() == '-' && pos_ + 1 < in_.size() && in_[pos_ + 1] != ']') {
        ++pos_;
        SetItem high = set_item();
        if (!low.code_point || !high.code_point) fail("bad character range");
        if (*high.code_point < *low.code_point) fail("bad character range");
        out_ += low.text + '-' + high.text;
      } else {
        out_ += low.text;
      }
    }
    ++pos_;
    out_ += ']';
  }

  // `{`: a quantifier {m}, {m,}, {,n}, {m,n} or, in Python, a literal '{'.
  void brace() {
    size_t p = pos_;
    auto digits = [&] {
      const size_t start = p;
      while (p < in_.size() && is_digit(in_[p])) ++p;
      return std::string(in_.substr(start, p - start));
    };
    const std::string low = digits();
    bool comma = p < in_.size() && in_[p] == ',';
    std::string high = comma ? (++p, digits()) : low;
    if (p >= in_.size() || in_[p] != '}' || (p == pos_)) {  // "{}" or no closing brace: a literal
      out_ += "\\{";
      return;
    }
    pos_ = p + 1;
    out_ += '{' + (low.empty() ? std::string("0") : low) + (comma ? "," + high : "") + '}';
  }

  void named_reference() {
    const size_t end = in_.find(')', pos_);
    if (end == std::string_view::npos) fail("missing ), unterminated name");
    out_ += "\\k<" + std::string(in_.substr(pos_ + 3, end - pos_ - 3)) + ">";
    pos_ = end + 1;
  }

  // Copies `opening` and the text up to and including `close` as it is (comments).
  void copy_through(char close, std::string_view opening) {
    const size_t end = std::min(in_.find(close, pos_), in_.size());
    out_ += opening;
    out_ += in_.substr(pos_, end + (end < in_.size() ? 1 : 0) - pos_);
    pos_ = std::min(end + 1, in_.size());
  }

  // '(' (pos_ after it): a group, capturing or not, or a construct that is none.
  void group() {
    const std::string_view rest = in_.substr(pos_);
    if (rest.starts_with("?P<")) {
      out_ += "(?<";
      pos_ += 3;
      open_group(true);
    } else if (rest.starts_with("?P=")) {
      named_reference();
    } else if (rest.starts_with("?#")) {
      copy_through(')', "(");
    } else if (rest.starts_with("?<") && !rest.starts_with("?<=") && !rest.starts_with("?<!")) {
      fail("unknown extension ?<");  // ICU's named group, not Python's
    } else if (rest.starts_with("?") && (rest.size() < 2 || is_ascii_letter(rest[1]) || rest[1] == '-')) {
      inline_flags(rest);
    } else {
      out_ += '(';
      open_group(!rest.starts_with("?"));
    }
  }

  // (?aiLmsux) or (?flags-flags:...). A glossary never starts the pattern it is used in (it
  // follows '^' or '('), where Python refuses flags for the whole pattern; scoped ones are kept.
  void inline_flags(std::string_view rest) {
    size_t p = 1;
    while (p < rest.size() && (is_ascii_letter(rest[p]) || rest[p] == '-')) {
      if (rest[p] == 'x') verbose_ = true;
      ++p;
    }
    if (p < rest.size() && rest[p] == ')') fail("global flags not at the start of the expression");
    out_ += '(';
    open_group(false);
  }

  void open_group(bool capturing) {
    open_groups_.push_back(capturing ? ++group_count_ : 0);
  }

  void close_group() {
    out_ += ')';
    if (open_groups_.empty()) return;  // unbalanced: ICU reports it
    if (open_groups_.back() != 0) closed_groups_.push_back(open_groups_.back());
    open_groups_.pop_back();
  }

  // \N outside a set: Python refuses a group that does not exist yet or is still open.
  std::string group_reference(const std::string& digits) {
    const size_t group = std::stoul(digits);
    if (group == 0 || group > group_count_) fail(fmt::format("invalid group reference {}", group));
    if (std::find(closed_groups_.begin(), closed_groups_.end(), group) == closed_groups_.end())
      fail("cannot refer to an open group");
    return "(?:\\" + digits + ")";  // kept apart from digits that follow
  }

  std::string_view in_;
  const std::string& label_;
  size_t pos_ = 0;
  std::string out_;
  bool verbose_ = false;
  size_t group_count_ = 0;
  std::vector<size_t> open_groups_;    // group number of each open '(' (0: not capturing)
  std::vector<size_t> closed_groups_;  // capturing groups already closed
};

}  // namespace

std::string python_regex_to_icu(const std::string& pattern, const std::string& label) {
  return PythonRegexTranslator(pattern, label).translate();
}

}  // namespace attn::data
