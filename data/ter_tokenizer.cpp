// sacreBLEU's Tercom tokenizer; see ter_tokenizer.hpp and docs/mt-tools.md §3.10. Each rule is
// one pass over the code points, as each is one re.sub in sacreBLEU: the order of the passes
// matters (a period split off by a later rule no longer lets `'s` before it be split off).
#include "data/ter_tokenizer.hpp"

#include <algorithm>

#include "data/bleu_tokenizers.hpp"
#include "data/perl_unicode.hpp"

namespace attn::data {
namespace {

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }
bool is_not_digit(char32_t c) { return !is_digit(c); }
bool is_period_or_comma(char32_t c) { return c == U'.' || c == U','; }
bool is_hyphen(char32_t c) { return c == U'-'; }

// The ASCII characters the normalizer pads with spaces: printable ASCII punctuation and symbols
// (and the space itself) except ' , - . , which the later rules treat by their context.
bool is_padded_ascii(char32_t c) {
  return (c >= U' ' && c <= U'&') || (c >= U'(' && c <= U'+') || c == U'/' || (c >= U':' && c <= U'@') ||
         (c >= U'[' && c <= U'`') || (c >= U'{' && c <= U'~');
}

// Ideographic and fullwidth punctuation: split off with --ter-normalized, removed with
// --ter-no-punct (both with --ter-asian-support).
bool is_asian_punctuation(char32_t c) {
  return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
         (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB;
}
bool is_fullwidth_punctuation(char32_t c) {
  return c == 0xFF0E || c == 0xFF0C || c == 0xFF1F || c == 0xFF1A || c == 0xFF1B || c == 0xFF01 || c == 0xFF02 ||
         c == 0xFF08 || c == 0xFF09;
}

// The characters that --ter-normalized --ter-asian-support makes words of their own: CJK
// ideographs (unified, extension A, compatibility), strokes, radicals, CJK compatibility
// characters and forms, U+3200–U+3F22 (enclosed CJK and beyond, as sacreBLEU's range reads), and
// the punctuation above. Kana runs would be split only where a segment starts with one, which
// never happens after the normalizer's leading space, so kana stay inside words.
bool is_split_asian(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x31C0 && c <= 0x31EF) ||
         (c >= 0x2E80 && c <= 0x2EFF) || (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22) || is_asian_punctuation(c) ||
         is_fullwidth_punctuation(c);
}

// Removed by --ter-no-punct.
bool is_removed_punctuation(char32_t c) {
  return std::u32string_view(U".,?:;!\"()").find(c) != std::u32string_view::npos;
}

// Puts a space on each side of every character for which `padded` holds.
void pad(std::u32string& text, bool (*padded)(char32_t)) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (padded(c)) {
      out.append({U' ', c, U' '});
    } else {
      out.push_back(c);
    }
  }
  text = std::move(out);
}

// re.sub of a pattern `(A)(B)` of two one-character classes: every non-overlapping match, left
// to right, becomes `before` A `middle` B `after`.
void rewrite_pairs(std::u32string& text, bool (*first)(char32_t), bool (*second)(char32_t),
                   std::u32string_view before, std::u32string_view middle, std::u32string_view after) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      out.append(before).append(1, text[i]).append(middle).append(1, text[i + 1]).append(after);
      ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  text = std::move(out);
}

// The language-independent and Western rules of --ter-normalized.
void normalize_western(std::u32string& text) {
  perl::replace_all(text, U"\n-", U"");  // line-end hyphenation (no line of a file has a '\n')
  perl::replace_all(text, U"\n", U" ");
  perl::replace_all(text, U"&quot;", U"\"");
  perl::replace_all(text, U"&amp;", U"&");  // after &quot;: `&amp;quot;` gives `&quot;`, then `&lt;` …
  perl::replace_all(text, U"&lt;", U"<");
  perl::replace_all(text, U"&gt;", U">");
  text = U" " + text + U" ";
  pad(text, is_padded_ascii);
  // A possessive `'s` before a space. (The rule for one ending the segment cannot fire: the
  // segment now ends with a space.)
  perl::replace_all(text, U"'s ", U" 's ");
  rewrite_pairs(text, is_not_digit, is_period_or_comma, U"", U" ", U" ");  // `a.` → `a . `
  rewrite_pairs(text, is_period_or_comma, is_not_digit, U" ", U" ", U"");  // `.a` → ` . a`
  rewrite_pairs(text, is_digit, is_hyphen, U"", U" ", U" ");               // `1-` → `1 - `
}

// --ter-no-punct: the punctuation characters are deleted, joining what they separated.
void remove_punctuation(std::u32string& text, bool asian_support) {
  std::erase_if(text, [asian_support](char32_t c) {
    return is_removed_punctuation(c) || (asian_support && (is_asian_punctuation(c) || is_fullwidth_punctuation(c)));
  });
}

}  // namespace

std::vector<std::string> ter_words(std::string_view segment, const TerOptions& options) {
  segment = rstrip_python_whitespace(segment);
  std::string text = options.case_sensitive ? std::string(segment) : python_lower(segment);
  if (options.normalized || options.no_punct) {
    std::u32string code_points = perl::decode_utf8(text, "TER segment");
    if (options.normalized) {
      normalize_western(code_points);
      if (options.asian_support) pad(code_points, is_split_asian);
    }
    if (options.no_punct) remove_punctuation(code_points, options.asian_support);
    text = perl::encode_utf8(code_points);
  }
  std::vector<std::string> words;
  for (std::string_view word : split_python_whitespace(text)) words.emplace_back(word);
  return words;
}

}  // namespace attn::data
