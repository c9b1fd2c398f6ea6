// normalize-punctuation.perl, rule by rule on bytes (docs/mt-tools.md §2.5). Each `s///g` is a
// left-to-right scan with non-overlapping matches, as Perl does it.
#include "data/normalize_punctuation.hpp"

#include <algorithm>
#include <array>

namespace attn::data {
namespace {

using ByteClass = bool (*)(unsigned char);

bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_ascii_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_bracket_follower(unsigned char c) { return std::string_view(".!:?;,").find(char(c)) != std::string_view::npos; }
// Perl `\s` on bytes.
bool is_byte_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// s/\Qfrom\E/to/g
void replace_all(std::string& text, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0;
  for (size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, start)) {
    out.append(text, start, hit - start).append(to);
    start = hit + from.size();
  }
  if (start == 0) return;
  out.append(text, start);
  text = std::move(out);
}

// s/ +/ /g
void squeeze_spaces(std::string& text) {
  auto end = std::unique(text.begin(), text.end(), [](char a, char b) { return a == ' ' && b == ' '; });
  text.erase(end, text.end());
}

// s/(LEFT)MIDDLE(RIGHT)/$1REPLACEMENT$2/g where LEFT and RIGHT are optional one-byte classes.
struct ContextPattern {
  ByteClass left;  // nullptr: no left byte
  std::string_view middle;
  ByteClass right;  // nullptr: no right byte
};

void replace_in_context(std::string& text, const ContextPattern& pattern, std::string_view replacement) {
  const size_t left = pattern.left ? 1 : 0, right = pattern.right ? 1 : 0;
  const size_t length = left + pattern.middle.size() + right;
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const bool match = i + length <= text.size() &&
                       (!pattern.left || pattern.left(static_cast<unsigned char>(text[i]))) &&
                       text.compare(i + left, pattern.middle.size(), pattern.middle) == 0 &&
                       (!pattern.right || pattern.right(static_cast<unsigned char>(text[i + length - 1])));
    if (!match) {
      out.push_back(text[i++]);
      continue;
    }
    out.append(text, i, left).append(replacement).append(text, i + length - right, right);
    i += length;
  }
  text = std::move(out);
}

// English: s/\"([,\.]+)/$1\"/g
void move_quote_after_commas_and_periods(std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t run_end = i + 1;
    if (text[i] == '"')
      while (run_end < text.size() && (text[run_end] == ',' || text[run_end] == '.')) ++run_end;
    if (run_end == i + 1) {  // not a quote, or no comma/period after it
      out.push_back(text[i++]);
      continue;
    }
    out.append(text, i + 1, run_end - i - 1).push_back('"');
    i = run_end;
  }
  text = std::move(out);
}

// Other languages: s/(\.+)\"(\s*[^<])/\"$1$2/g. After the quote the match needs one more byte:
// the longest run of spaces plus the next byte when that is not '<', else the spaces alone
// (backtracking gives the last space to [^<]). The '\n' of the record counts as that byte.
void move_quote_before_periods(std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '.') {
      out.push_back(text[i++]);
      continue;
    }
    size_t dots_end = i;
    while (dots_end < text.size() && text[dots_end] == '.') ++dots_end;
    size_t tail_end = dots_end + 1;  // one past the quote
    if (dots_end < text.size() && text[dots_end] == '"') {
      size_t spaces_end = tail_end;
      while (spaces_end < text.size() && is_byte_space(static_cast<unsigned char>(text[spaces_end]))) ++spaces_end;
      tail_end = spaces_end < text.size() && text[spaces_end] != '<' ? spaces_end + 1 : spaces_end;
    }
    if (tail_end == dots_end + 1) {  // no quote, or nothing [^<] can take after it
      out.append(text, i, dots_end - i);
      i = dots_end;
      continue;
    }
    out.push_back('"');
    out.append(text, i, dots_end - i).append(text, dots_end + 1, tail_end - dots_end - 1);
    i = tail_end;
  }
  text = std::move(out);
}

void normalize_spacing(std::string& text) {
  replace_all(text, "\r", "");
  replace_all(text, "(", " (");
  replace_all(text, ")", ") ");
  squeeze_spaces(text);
  replace_in_context(text, {nullptr, ") ", is_bracket_follower}, ")");
  replace_all(text, "( ", "(");
  replace_all(text, " )", ")");
  replace_in_context(text, {is_digit, " %", nullptr}, "%");
  replace_all(text, " :", ":");
  replace_all(text, " ;", ";");
}

void normalize_quotes_and_dashes(std::string& text, bool penn) {
  if (!penn) {
    replace_all(text, "`", "'");
    replace_all(text, "''", " \" ");
  }
  for (std::string_view quote : {"„", "“", "”"}) replace_all(text, quote, "\"");
  replace_all(text, "–", "-");
  replace_all(text, "—", " - ");
  squeeze_spaces(text);
  replace_all(text, "´", "'");
  for (std::string_view apostrophe : {"‘", "’"})
    replace_in_context(text, {is_ascii_letter, apostrophe, is_ascii_letter}, "'");
  replace_all(text, "‘", "'");
  replace_all(text, "‚", "'");
  replace_all(text, "’", "\"");
  replace_all(text, "''", "\"");
  // The script's s/´´/"/ comes here; it never matches, every ´ is already a '.
  replace_all(text, "…", "...");
}

void normalize_french_quotes_and_pseudo_spaces(std::string& text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kRules{{
      {"\u00A0«\u00A0", " \""}, {"«\u00A0", "\""}, {"«", "\""},
      {"\u00A0»\u00A0", "\" "}, {"\u00A0»", "\""}, {"»", "\""},
      {"\u00A0%", "%"}, {"nº\u00A0", "nº "}, {"\u00A0:", ":"}, {"\u00A0ºC", " ºC"}, {"\u00A0cm", " cm"},
      {"\u00A0?", "?"}, {"\u00A0!", "!"}, {"\u00A0;", ";"}, {",\u00A0", ", "},
  }};
  for (auto [from, to] : kRules) replace_all(text, from, to);
  squeeze_spaces(text);
}

}  // namespace

PunctuationNormalizer::PunctuationNormalizer(const NormalizePunctuationOptions& options) : penn_(options.penn) {
  const std::string& language = options.language;
  quote_style_ = language == "en"                      ? QuoteStyle::English
                 : language == "cs" || language == "cz" ? QuoteStyle::Czech
                                                        : QuoteStyle::Other;
  const bool comma_groups = language == "de" || language == "es" || language == "cz" || language == "cs" ||
                            language == "fr";
  digit_group_separator_ = comma_groups ? ',' : '.';
}

std::string PunctuationNormalizer::normalize_record(std::string_view record) const {
  std::string text(record);
  normalize_spacing(text);
  normalize_quotes_and_dashes(text, penn_);
  normalize_french_quotes_and_pseudo_spaces(text);
  if (quote_style_ == QuoteStyle::English) {
    move_quote_after_commas_and_periods(text);
  } else if (quote_style_ == QuoteStyle::Other) {
    replace_all(text, ",\"", "\",");
    move_quote_before_periods(text);
  }
  replace_in_context(text, {is_digit, "\u00A0", is_digit}, std::string_view(&digit_group_separator_, 1));
  return text;
}

}  // namespace attn::data
