#include "data/moses_tokenizer.hpp"

#include <algorithm>
#include <vector>

#include "data/perl_unicode.hpp"

namespace attn::data {
namespace {

using Text = std::u32string;
using perl::is_alnum;
using perl::is_alpha;
using perl::is_number;
using perl::is_lowercase_letter;
using perl::is_space;
using perl::squeeze_spaces;

// Perl s/PATTERN/REPLACEMENT/g for a pattern of fixed width: scanning left to right, where
// `matches(t, i)` accepts the text at i (it may also look ahead), `emit(out, t, i)` appends the
// replacement and the scan resumes after the `width` consumed code points.
template <class Matches, class Emit>
Text substitute(const Text& t, size_t width, Matches matches, Emit emit) {
  Text out;
  out.reserve(t.size() + t.size() / 4);
  for (size_t i = 0; i < t.size();) {
    if (matches(t, i)) {
      emit(out, t, i);
      i += width;
    } else {
      out.push_back(t[i++]);
    }
  }
  return out;
}

// Step 2, s/\s+/ /g.
Text collapse_whitespace(const Text& t) {
  Text out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size();) {
    if (!is_space(t[i])) {
      out.push_back(t[i++]);
      continue;
    }
    out.push_back(U' ');
    while (i < t.size() && is_space(t[i])) ++i;
  }
  return out;
}

// Step 3, s/[\000-\037]//g.
void delete_control_characters(Text& t) {
  std::erase_if(t, [](char32_t c) { return c < 0x20; });
}

// Step 6, s/([^\p{IsAlnum}\s\.\'\`\,\-])/ $1 /g; `kept` holds the characters a language adds
// to the class (none for most languages).
Text pad_special_characters(const Text& t, std::u32string_view kept) {
  auto is_special = [kept](char32_t c) {
    return !is_alnum(c) && !is_space(c) && c != U'.' && c != U'\'' && c != U'`' && c != U',' && c != U'-' &&
           kept.find(c) == std::u32string_view::npos;
  };
  return substitute(
      t, 1, [&](const Text& s, size_t i) { return is_special(s[i]); },
      [](Text& out, const Text& s, size_t i) { out.append(U" ").append(1, s[i]).append(U" "); });
}

// Step 6's second rule for fi, sv, ca and tdt, s/(P)(?=$|[^\p{Ll}])/ $1 /g: P stays inside a
// word only before a lowercase letter ("EU:ssa").
Text pad_unless_before_lowercase(const Text& t, std::u32string_view p) {
  return substitute(
      t, p.size(),
      [p](const Text& s, size_t i) {
        const size_t after = i + p.size();
        return s.compare(i, p.size(), p) == 0 && (after == s.size() || !is_lowercase_letter(s[after]));
      },
      [p](Text& out, const Text&, size_t) { out.append(U" ").append(p).append(U" "); });
}

// tokenizer.perl is read as Latin-1 (it has no `use utf8`), so the middle dot of its Catalan
// rules is the two characters U+00C2 U+00B7: both are kept out of the padding, and the
// second rule looks for the pair "Â·" (a lone "·" is never split off: "a·B" stays).
constexpr std::u32string_view kCatalanMiddleDot = U"\u00C2\u00B7";

// Step 7 (-a), s/([\p{IsAlnum}])\-(?=[\p{IsAlnum}])/$1 \@-\@ /g.
Text split_aggressive_hyphens(const Text& t) {
  return substitute(
      t, 2,
      [](const Text& s, size_t i) {
        return i + 2 < s.size() && s[i + 1] == U'-' && is_alnum(s[i]) && is_alnum(s[i + 2]);
      },
      [](Text& out, const Text& s, size_t i) { out.append(1, s[i]).append(U" @-@ "); });
}

constexpr std::u32string_view kDotMulti = U"DOTMULTI";
constexpr std::u32string_view kDot = U"DOT";

size_t end_of_dot_run(const Text& t, size_t from) {
  while (from < t.size() && t[from] == U'.') ++from;
  return from;
}

// Step 8's first substitution, s/\.([\.]+)/ DOTMULTI$1/g: a run of k >= 2 dots becomes
// " DOTMULTI" and k - 1 dots.
Text insert_dot_multi(const Text& t) {
  Text out;
  out.reserve(t.size() + 16);
  for (size_t i = 0; i < t.size();) {
    if (t[i] == U'.' && i + 1 < t.size() && t[i + 1] == U'.') {
      const size_t run_end = end_of_dot_run(t, i);
      out.append(U" ").append(kDotMulti).append(run_end - i - 1, U'.');
      i = run_end;
    } else {
      out.push_back(t[i++]);
    }
  }
  return out;
}

// Step 8's loop, while (/DOTMULTI\./) { s/DOTMULTI\.([^\.])/DOTDOTMULTI $1/g; s/DOTMULTI\./DOTDOTMULTI/g },
// computed in one pass: run literally it is quadratic in the longest run of dots (100,000 dots
// took minutes). Each pass takes one dot off every run of dots that follows a "DOTMULTI" (a live
// run): "DOTMULTI." becomes "DOTDOTMULTI", whose last eight letters are again "DOTMULTI", and a
// last dot with a character after it becomes "DOTDOTMULTI " (the first substitution). So a live
// run of m dots ends as "DOT" m times, "DOTMULTI", and a space when a character follows. The one
// exception needs input that spells DOTMULTI ("DOTMULTI.DOTMULTI.x"): the first substitution's
// match consumes its ([^\.]), so when that is the D of the next live run, on the first pass, that
// run's single dot goes to the second substitution, which adds no space.
Text resolve_dot_multi(const Text& t) {
  Text out;
  out.reserve(t.size() + t.size() / 2);
  size_t copied = 0;
  size_t consumed = Text::npos;  // the character the first substitution took on the first pass
  for (size_t p = t.find(kDotMulti); p != Text::npos; p = t.find(kDotMulti, p + kDotMulti.size())) {
    const size_t dots_start = p + kDotMulti.size(), run_end = end_of_dot_run(t, dots_start);
    const size_t dots = run_end - dots_start;
    if (dots == 0) continue;
    const bool followed = run_end < t.size(), blocked = p == consumed;
    consumed = dots == 1 && followed && !blocked ? run_end : Text::npos;
    out.append(t, copied, p - copied);
    for (size_t k = 0; k < dots; ++k) out.append(kDot);
    out.append(kDotMulti);
    if (followed && (dots > 1 || !blocked)) out.push_back(U' ');
    copied = run_end;
  }
  return out.append(t, copied);
}

// Step 15: while (/DOTDOTMULTI/) { s/DOTDOTMULTI/DOTMULTI./g } s/DOTMULTI/./g, in one pass. Each
// pass turns the "DOT" just before a "DOTMULTI" into a dot after it, so "DOT" k times followed by
// "DOTMULTI" ends as k + 1 dots (looped, k passes over the whole line).
void restore_multi_dots(Text& t) {
  Text out;
  out.reserve(t.size());
  size_t copied = 0;
  for (size_t p = t.find(kDotMulti); p != Text::npos; p = t.find(kDotMulti, copied)) {
    size_t chain_start = p;
    while (chain_start >= copied + kDot.size() && t.compare(chain_start - kDot.size(), kDot.size(), kDot) == 0)
      chain_start -= kDot.size();
    out.append(t, copied, chain_start - copied).append((p - chain_start) / kDot.size() + 1, U'.');
    copied = p + kDotMulti.size();
  }
  t = std::move(out.append(t, copied));
}

// Step 9: s/([^\p{IsN}])[,]/$1 , /g; s/[,]([^\p{IsN}])/ , $1/g; s/([\p{IsN}])[,]$/$1 ,/g.
Text separate_commas(const Text& t) {
  Text out = substitute(
      t, 2, [](const Text& s, size_t i) { return i + 1 < s.size() && s[i + 1] == U',' && !is_number(s[i]); },
      [](Text& o, const Text& s, size_t i) { o.append(1, s[i]).append(U" , "); });
  out = substitute(
      out, 2, [](const Text& s, size_t i) { return s[i] == U',' && i + 1 < s.size() && !is_number(s[i + 1]); },
      [](Text& o, const Text& s, size_t i) { o.append(U" , ").append(1, s[i + 1]); });
  size_t n = out.size();
  if (n >= 2 && out[n - 1] == U',' && is_number(out[n - 2])) out.insert(n - 1, 1, U' ');
  return out;
}

// One English apostrophe rule s/(L)[']([R])/$1<middle>$2/g, where `applies(left, right)`
// tests the classes of the characters around the apostrophe.
template <class Applies>
Text split_apostrophe(const Text& t, Applies applies, std::u32string_view middle) {
  return substitute(
      t, 3, [&](const Text& s, size_t i) { return i + 2 < s.size() && s[i + 1] == U'\'' && applies(s[i], s[i + 2]); },
      [&](Text& o, const Text& s, size_t i) { o.append(1, s[i]).append(middle).append(1, s[i + 2]); });
}

// Step 10 for en: contractions split to the right ("don't" -> "don 't").
Text split_english_apostrophes(Text t) {
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return !is_alpha(l) && !is_alpha(r); }, U" ' ");
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return !is_alpha(l) && !is_number(l) && is_alpha(r); }, U" ' ");
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return is_alpha(l) && !is_alpha(r); }, U" ' ");
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return is_alpha(l) && is_alpha(r); }, U" '");
  return split_apostrophe(t, [](char32_t l, char32_t r) { return is_number(l) && r == U's'; }, U" '");
}

// Step 10 for fr, it, ga and ca: elisions split to the left ("l'homme" -> "l' homme").
Text split_left_apostrophes(Text t) {
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return !is_alpha(l) && !is_alpha(r); }, U" ' ");
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return !is_alpha(l) && is_alpha(r); }, U" ' ");
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return is_alpha(l) && !is_alpha(r); }, U" ' ");
  return split_apostrophe(t, [](char32_t l, char32_t r) { return is_alpha(l) && is_alpha(r); }, U"' ");
}

// Step 10 for so and tdt: as the left split, but an apostrophe between letters stays.
Text split_apostrophes_outside_words(Text t) {
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return !is_alpha(l) && !is_alpha(r); }, U" ' ");
  t = split_apostrophe(t, [](char32_t l, char32_t r) { return !is_alpha(l) && is_alpha(r); }, U" ' ");
  return split_apostrophe(t, [](char32_t l, char32_t r) { return is_alpha(l) && !is_alpha(r); }, U" ' ");
}

// Step 10 for every other language, s/\'/ \' /g.
Text split_all_apostrophes(const Text& t) {
  return substitute(
      t, 1, [](const Text& s, size_t i) { return s[i] == U'\''; },
      [](Text& o, const Text&, size_t) { o.append(U" ' "); });
}

// split(/\s/, $text) on text whose only whitespace is ' ': empty fields kept, trailing ones dropped.
std::vector<std::u32string_view> split_words(const Text& t) {
  std::vector<std::u32string_view> words;
  std::u32string_view rest(t);
  for (size_t space; (space = rest.find(U' ')) != std::u32string_view::npos; rest.remove_prefix(space + 1))
    words.push_back(rest.substr(0, space));
  words.push_back(rest);
  while (!words.empty() && words.back().empty()) words.pop_back();
  return words;
}

// Step 13, s/\.\' ?$/ . ' / (the trailing space stays in the output).
void split_final_period_quote(Text& t) {
  if (t.ends_with(U".'")) t.replace(t.size() - 2, 2, U" . ' ");
}

// Step 16 and the UTF-8 output: & | < > ' " [ ] become entities unless escaping is off.
std::string encode_output(const Text& t, bool escape) {
  std::string out;
  out.reserve(t.size() + t.size() / 4);
  for (char32_t c : t) {
    std::string_view entity;
    if (escape) {
      switch (c) {
        case U'&': entity = "&amp;"; break;
        case U'|': entity = "&#124;"; break;
        case U'<': entity = "&lt;"; break;
        case U'>': entity = "&gt;"; break;
        case U'\'': entity = "&apos;"; break;
        case U'"': entity = "&quot;"; break;
        case U'[': entity = "&#91;"; break;
        case U']': entity = "&#93;"; break;
        default: break;
      }
    }
    if (entity.empty())
      perl::append_utf8(out, c);
    else
      out.append(entity);
  }
  return out;
}

bool starts_with_ascii_digit(std::u32string_view word) {
  return !word.empty() && word.front() >= U'0' && word.front() <= U'9';
}

constexpr std::pair<std::string_view, MosesLanguage> kLanguageCodes[] = {
    {"en", MosesLanguage::English}, {"de", MosesLanguage::German},  {"fr", MosesLanguage::French},
    {"it", MosesLanguage::Italian}, {"ga", MosesLanguage::Irish},   {"ca", MosesLanguage::Catalan},
    {"cs", MosesLanguage::Czech},   {"fi", MosesLanguage::Finnish}, {"sv", MosesLanguage::Swedish},
    {"so", MosesLanguage::Somali},  {"tdt", MosesLanguage::Tetun},  {"ko", MosesLanguage::Korean}};

}  // namespace

MosesLanguage parse_moses_language(std::string_view code) {
  for (const auto& [name, language] : kLanguageCodes)
    if (code == name) return language;
  return MosesLanguage::Other;
}

std::vector<std::string> moses_language_codes() {
  std::vector<std::string> codes;
  for (const auto& entry : kLanguageCodes) codes.emplace_back(entry.first);
  return codes;
}

MosesTokenizerOptions moses_tokenizer_options(std::string_view code) {
  return {.language = parse_moses_language(code), .prefix_language = std::string(code)};
}

namespace {

// The code whose prefix list a tokenizer uses: the one given, else the first code with these
// rules (none for Other, which therefore gets the English list).
std::string_view prefix_language_of(const MosesTokenizerOptions& options) {
  if (!options.prefix_language.empty()) return options.prefix_language;
  for (const auto& [name, language] : kLanguageCodes)
    if (language == options.language) return name;
  return "en";
}

}  // namespace

MosesTokenizer::MosesTokenizer(MosesTokenizerOptions options)
    : options_(options), prefixes_(NonbreakingPrefixes::builtin(prefix_language_of(options))) {}

std::string MosesTokenizer::tokenize(std::string_view line) const {
  if (line.ends_with('\n')) line.remove_suffix(1);  // chomp
  Text text = perl::decode_utf8(line, "Moses tokenizer input");
  if (perl::is_blank(text)) return std::string(line);
  return encode_output(tokenize_text(std::move(text)), options_.escape);
}

std::string MosesTokenizer::tokenize_record(std::string_view record) const {
  std::string_view line = record.ends_with('\n') ? record.substr(0, record.size() - 1) : record;
  Text text = perl::decode_utf8(line, "Moses tokenizer input");
  if (perl::is_blank(text)) return std::string(record);
  return encode_output(tokenize_text(std::move(text)), options_.escape) + "\n";
}

// Step 11: a word "pre." keeps its period when it does not end a sentence.
bool MosesTokenizer::keeps_final_period(const std::vector<std::u32string_view>& words, size_t i) const {
  std::u32string_view pre = words[i].substr(0, words[i].size() - 1);
  bool is_last = i + 1 == words.size();
  if (is_last && !options_.legacy2018) return false;
  std::u32string_view next = is_last ? std::u32string_view{} : words[i + 1];
  bool is_abbreviation = pre.find(U'.') != std::u32string_view::npos && std::any_of(pre.begin(), pre.end(), is_alpha);
  PrefixKind kind = prefixes_.kind(perl::encode_utf8(pre));
  if (is_abbreviation || kind == PrefixKind::Always || (!next.empty() && perl::is_lower(next.front())))
    return true;
  return kind == PrefixKind::NumericOnly && starts_with_ascii_digit(next);
}

MosesTokenizer::Text MosesTokenizer::split_final_periods(const Text& t) const {
  std::vector<std::u32string_view> words = split_words(t);
  Text out;
  out.reserve(t.size() + 8);
  for (size_t i = 0; i < words.size(); ++i) {
    std::u32string_view word = words[i];
    bool ends_in_period = word.size() >= 2 && word.back() == U'.';
    if (ends_in_period && !keeps_final_period(words, i))
      out.append(word.substr(0, word.size() - 1)).append(U" .");
    else
      out.append(word);
    out.push_back(U' ');
  }
  return out;
}

// Step 6 with the exceptions of fi and sv (':'), ca (the middle dot) and tdt (the apostrophe).
MosesTokenizer::Text MosesTokenizer::pad_special_characters_for_language(const Text& text) const {
  switch (options_.language) {
    case MosesLanguage::Finnish:
    case MosesLanguage::Swedish:
      return pad_unless_before_lowercase(pad_special_characters(text, U":"), U":");
    case MosesLanguage::Catalan:
      return pad_unless_before_lowercase(pad_special_characters(text, kCatalanMiddleDot), kCatalanMiddleDot);
    case MosesLanguage::Tetun:
      return pad_unless_before_lowercase(pad_special_characters(text, U""), U"'");
    default:
      return pad_special_characters(text, U"");
  }
}

// Step 10: the apostrophe rules of each language.
MosesTokenizer::Text MosesTokenizer::split_apostrophes_for_language(Text text) const {
  switch (options_.language) {
    case MosesLanguage::English:
      return split_english_apostrophes(std::move(text));
    case MosesLanguage::French:
    case MosesLanguage::Italian:
    case MosesLanguage::Irish:
    case MosesLanguage::Catalan:
      return split_left_apostrophes(std::move(text));
    case MosesLanguage::Somali:
    case MosesLanguage::Tetun:
      return split_apostrophes_outside_words(std::move(text));
    default:
      return split_all_apostrophes(text);
  }
}

MosesTokenizer::Text MosesTokenizer::tokenize_text(Text text) const {
  text = U" " + text + U" ";                                                   // step 1
  text = collapse_whitespace(text);                                            // step 2
  delete_control_characters(text);                                             // step 3
  squeeze_spaces(text);                                                        // step 5
  text = pad_special_characters_for_language(text);                            // step 6
  if (options_.aggressive_hyphen_splitting) text = split_aggressive_hyphens(text);  // step 7
  text = resolve_dot_multi(insert_dot_multi(text));                            // step 8
  text = separate_commas(text);                                                // step 9
  text = split_apostrophes_for_language(std::move(text));                      // step 10
  text = split_final_periods(text);                                            // step 11
  squeeze_spaces(text);                                                        // step 12
  split_final_period_quote(text);                                              // step 13
  restore_multi_dots(text);                                                    // step 15
  return text;
}

}  // namespace attn::data
