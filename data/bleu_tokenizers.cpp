// sacreBLEU / multi-bleu.perl / fairseq tokenization rules; see bleu_tokenizers.hpp and
// docs/mt-tools.md §3.
#include "data/bleu_tokenizers.hpp"

#include <unicode/uchar.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <utility>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {
namespace {

// One step of a Python `re.sub` whose pattern is two adjacent one-character classes:
// the scan goes left to right and a match consumes both characters, so the second one
// cannot start the next match (`x.,y` → `x . ,y` under 13a rule 2).
enum class PairSpacing {
  kBetweenAndAfter,   // r'\1 \2 '
  kBeforeAndBetween,  // r' \1 \2'
};

template <class Text, class Match>
Text rewrite_adjacent_pairs(const Text& in, PairSpacing spacing, Match match) {
  Text out;
  out.reserve(in.size() + in.size() / 2 + 2);
  size_t i = 0;
  while (i < in.size()) {
    if (i + 1 < in.size() && match(in[i], in[i + 1])) {
      if (spacing == PairSpacing::kBeforeAndBetween) out.push_back(' ');
      out.push_back(in[i]);
      out.push_back(' ');
      out.push_back(in[i + 1]);
      if (spacing == PairSpacing::kBetweenAndAfter) out.push_back(' ');
      i += 2;
    } else {
      out.push_back(in[i++]);
    }
  }
  return out;
}

// r' \1 ' on every character selected by `pad`.
template <class Text, class Pad>
Text pad_characters(const Text& in, Pad pad) {
  Text out;
  out.reserve(in.size() * 2);
  for (auto c : in) {
    if (pad(c)) {
      out.push_back(' ');
      out.push_back(c);
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// ' '.join(line.split())
std::string normalize_python_spaces(std::string_view line) {
  std::string out;
  for (std::string_view token : split_python_whitespace(line)) {
    if (!out.empty()) out.push_back(' ');
    out.append(token);
  }
  return out;
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
}

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// 13a rule 1: the class [\{-\~\[-\` -\&\(-\+\:-\@\/] — ASCII punctuation and symbols other
// than ' , - . (and the space itself, which is harmless to pad).
bool is_13a_padded_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  int32_t i = 0, n = int32_t(text.size());
  while (i < n) {
    UChar32 c;
    U8_NEXT(text.data(), i, n, c);
    out.push_back(c < 0 ? U'\uFFFD' : char32_t(c));
  }
  return out;
}

std::string encode_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (char32_t c : text) {
    char buffer[U8_MAX_LENGTH];
    int32_t length = 0;
    U8_APPEND_UNSAFE(buffer, length, UChar32(c));
    out.append(buffer, size_t(length));
  }
  return out;
}

bool has_general_category(char32_t c, uint32_t mask) { return (U_GET_GC_MASK(UChar32(c)) & mask) != 0; }
bool is_unicode_number(char32_t c) { return has_general_category(c, U_GC_N_MASK); }
bool is_unicode_punctuation(char32_t c) { return has_general_category(c, U_GC_P_MASK); }
bool is_unicode_symbol(char32_t c) { return has_general_category(c, U_GC_S_MASK); }

// Perl \s on bytes (PerlBWS).
bool is_perl_byte_whitespace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Tokens of `line` separated by runs of characters for which is_space(code point) holds;
// `decode` says whether to step by UTF-8 code points or by bytes.
template <class IsSpace>
std::vector<std::string_view> split_on(std::string_view line, bool decode, IsSpace is_space) {
  std::vector<std::string_view> tokens;
  int32_t i = 0, n = int32_t(line.size());
  int32_t token_start = -1;
  while (i < n) {
    int32_t start = i;
    bool space;
    if (decode) {
      UChar32 c;
      U8_NEXT(line.data(), i, n, c);
      space = c >= 0 && is_space(char32_t(c));
    } else {
      space = is_space(char32_t(static_cast<unsigned char>(line[size_t(i++)])));
    }
    if (space && token_start >= 0) {
      tokens.push_back(line.substr(size_t(token_start), size_t(start - token_start)));
      token_start = -1;
    } else if (!space && token_start < 0) {
      token_start = start;
    }
  }
  if (token_start >= 0) tokens.push_back(line.substr(size_t(token_start)));
  return tokens;
}

// 13a rules 1–4 and the final space collapsing, shared by 13a and zh (sacreBLEU's
// TokenizerRegexp): pad ASCII symbols, split period/comma next to non-digits, dash after a digit.
std::string apply_13a_rules(std::string text) {
  text = pad_characters(text, is_13a_padded_symbol);
  text = rewrite_adjacent_pairs(text, PairSpacing::kBetweenAndAfter,
                                [](char a, char b) { return !is_ascii_digit(a) && is_period_or_comma(b); });
  text = rewrite_adjacent_pairs(text, PairSpacing::kBeforeAndBetween,
                                [](char a, char b) { return is_period_or_comma(a) && !is_ascii_digit(b); });
  text = rewrite_adjacent_pairs(text, PairSpacing::kBetweenAndAfter,
                                [](char a, char b) { return is_ascii_digit(a) && b == '-'; });
  return normalize_python_spaces(text);
}

}  // namespace

BleuTokenizer parse_bleu_tokenizer(std::string_view name) {
  if (name == "13a") return BleuTokenizer::k13a;
  if (name == "intl") return BleuTokenizer::kIntl;
  if (name == "zh") return BleuTokenizer::kZh;
  if (name == "char") return BleuTokenizer::kChar;
  if (name == "none") return BleuTokenizer::kNone;
  throw DataError(fmt::format("unknown BLEU tokenizer '{}' (choose 13a, intl, zh, char or none)", name));
}

std::vector<std::string> bleu_tokenizer_names() { return {"13a", "intl", "zh", "char", "none"}; }

std::string_view bleu_tokenizer_name(BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::k13a: return "13a";
    case BleuTokenizer::kIntl: return "intl";
    case BleuTokenizer::kZh: return "zh";
    case BleuTokenizer::kChar: return "char";
    case BleuTokenizer::kNone: return "none";
  }
  return "none";
}

std::string tokenize_13a(std::string_view line) {
  std::string text(line);
  replace_all(text, "<skipped>", "");
  replace_all(text, "-\n", "");
  replace_all(text, "\n", " ");
  if (text.find('&') != std::string::npos) {
    replace_all(text, "&quot;", "\"");
    replace_all(text, "&amp;", "&");
    replace_all(text, "&lt;", "<");
    replace_all(text, "&gt;", ">");
  }
  return apply_13a_rules(" " + text + " ");
}

bool is_sacrebleu_chinese_character(char32_t c) {
  // Sorted, disjoint, inclusive; adjacent blocks of sacreBLEU's list are merged.
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x2001, 0x2A6D}, {0x2E80, 0x2FDF}, {0x2FF0, 0x303F}, {0x3100, 0x312F}, {0x31A0, 0x31EF},
      {0x3200, 0x4DB5}, {0x4E00, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9},
      {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF},
  };
  for (const auto& [first, last] : kRanges)
    if (c >= first && c <= last) return true;
  return false;
}

std::string tokenize_zh(std::string_view line) {
  line = strip_python_whitespace(line);
  std::string text;
  text.reserve(line.size() * 2);
  int32_t i = 0, n = int32_t(line.size());
  while (i < n) {
    int32_t start = i;
    UChar32 c;
    U8_NEXT(line.data(), i, n, c);
    // Invalid UTF-8 (c < 0) is copied unchanged: the 13a rules look at ASCII bytes only.
    const bool chinese = c >= 0 && is_sacrebleu_chinese_character(char32_t(c));
    if (chinese) text.push_back(' ');
    text.append(line.substr(size_t(start), size_t(i - start)));
    if (chinese) text.push_back(' ');
  }
  // No spaces are added at the ends here (13a adds them), so a final `5.` or initial `.5` stays.
  return apply_13a_rules(std::move(text));
}

std::string tokenize_intl(std::string_view line) {
  std::u32string text = decode_utf8(line);
  text = rewrite_adjacent_pairs(text, PairSpacing::kBetweenAndAfter, [](char32_t a, char32_t b) {
    return !is_unicode_number(a) && is_unicode_punctuation(b);
  });
  text = rewrite_adjacent_pairs(text, PairSpacing::kBeforeAndBetween, [](char32_t a, char32_t b) {
    return is_unicode_punctuation(a) && !is_unicode_number(b);
  });
  text = pad_characters(text, is_unicode_symbol);
  return normalize_python_spaces(encode_utf8(text));
}

std::string tokenize_char(std::string_view line) {
  std::u32string spaced;
  for (char32_t c : decode_utf8(line)) {
    if (!spaced.empty()) spaced.push_back(U' ');
    spaced.push_back(c);
  }
  return encode_utf8(spaced);
}

std::string apply_bleu_tokenizer(BleuTokenizer tokenizer, std::string_view line) {
  switch (tokenizer) {
    case BleuTokenizer::k13a: return tokenize_13a(line);
    case BleuTokenizer::kIntl: return tokenize_intl(line);
    case BleuTokenizer::kZh: return tokenize_zh(line);
    case BleuTokenizer::kChar: return tokenize_char(line);
    case BleuTokenizer::kNone: break;
  }
  return std::string(line);
}

bool is_python_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

std::vector<std::string_view> split_python_whitespace(std::string_view line) {
  return split_on(line, true, is_python_whitespace);
}

std::string_view rstrip_python_whitespace(std::string_view line) {
  std::vector<std::string_view> tokens = split_python_whitespace(line);
  if (tokens.empty()) return line.substr(0, 0);
  const char* end = tokens.back().data() + tokens.back().size();
  return line.substr(0, size_t(end - line.data()));
}

std::string_view strip_python_whitespace(std::string_view line) {
  std::vector<std::string_view> tokens = split_python_whitespace(line);
  if (tokens.empty()) return line.substr(0, 0);
  const char* begin = tokens.front().data();
  const char* end = tokens.back().data() + tokens.back().size();
  return line.substr(size_t(begin - line.data()), size_t(end - begin));
}

std::string python_lower(std::string_view line) {
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(icu::StringPiece(line.data(), int32_t(line.size())));
  std::string out;
  text.toLower(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

std::vector<std::string_view> split_perl_byte_whitespace(std::string_view line) {
  return split_on(line, false, [](char32_t c) { return c < 0x80 && is_perl_byte_whitespace(char(c)); });
}

std::string ascii_lower(std::string_view line) {
  std::string out(line);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

std::string compound_split(std::string_view line) {
  std::string out;
  out.reserve(line.size() + 32);
  size_t i = 0;
  while (i < line.size()) {
    if (i + 2 < line.size() && line[i + 1] == '-' && !is_perl_byte_whitespace(line[i]) &&
        !is_perl_byte_whitespace(line[i + 2])) {
      out.push_back(line[i]);
      out.append(" ##AT##-##AT## ");
      out.push_back(line[i + 2]);
      i += 3;
    } else {
      out.push_back(line[i++]);
    }
  }
  return out;
}

}  // namespace attn::data
