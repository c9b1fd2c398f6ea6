#include "data/moses_detokenizer.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "data/perl_unicode.hpp"

namespace attn::data {
namespace {

using Text = std::u32string;
using Word = std::u32string_view;

// detokenizer.perl's charIsCJK: Hangul Jamo, CJK radicals ... Yi, Phags-pa, Hangul syllables,
// CJK compatibility ideographs and forms, halfwidth Katakana/Hangul, the ideographic plane.
bool is_cjk(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x1100, 0x11FF}, {0x2E80, 0xA4CF}, {0xA840, 0xA87F}, {0xAC00, 0xD7AF},
      {0xF900, 0xFAFF}, {0xFE30, 0xFE4F}, {0xFF65, 0xFFDC}, {0x20000, 0x2FFFF}};
  return std::any_of(std::begin(kRanges), std::end(kRanges),
                     [c](const auto& range) { return c >= range.first && c <= range.second; });
}

bool starts_with_cjk(Word w) { return !w.empty() && is_cjk(w.front()); }
bool ends_with_cjk(Word w) { return !w.empty() && is_cjk(w.back()); }

template <class Predicate>
bool all_of_nonempty(Word w, Predicate belongs) {
  return !w.empty() && std::all_of(w.begin(), w.end(), belongs);
}

// /^[\p{IsSc}\(\[\{\¿\¡]+$/: attaches to the next token.
bool is_opening(Word w) {
  return all_of_nonempty(w, [](char32_t c) { return perl::is_currency(c) || Word(U"([{¿¡").find(c) != Word::npos; });
}

// /^[\,\.\?\!\:\;\\\%\}\]\)]+$/: attaches to the previous token.
bool is_closing(Word w) {
  return all_of_nonempty(w, [](char32_t c) { return Word(U",.?!:;\\%}])").find(c) != Word::npos; });
}

// /^[\'\"„“`]+$/: a quote, opening or closing by its count.
bool is_quote(Word w) {
  return all_of_nonempty(w, [](char32_t c) { return Word(U"'\"„“`").find(c) != Word::npos; });
}

// /^[„“”]+$/ quotes are counted together with '"'.
Text quote_kind(Word w) {
  bool double_quote = all_of_nonempty(w, [](char32_t c) { return Word(U"„“”").find(c) != Word::npos; });
  return double_quote ? Text(U"\"") : Text(w);
}

// English contraction after a word: /^[\'][\p{IsAlpha}]/ after /[\p{IsAlnum}]$/.
bool is_contraction_after(Word w, Word previous) {
  return w.size() >= 2 && w[0] == U'\'' && perl::is_alpha(w[1]) && !previous.empty() &&
         perl::is_alnum(previous.back());
}

bool all_ascii_digits(Word w) {
  return all_of_nonempty(w, [](char32_t c) { return c >= U'0' && c <= U'9'; });
}

// fr, it: /[\p{IsAlpha}][\']$/, an elided word such as "l'" that joins the next word.
bool ends_in_elision(Word w) { return w.size() >= 2 && w.back() == U'\'' && perl::is_alpha(w[w.size() - 2]); }

char32_t ascii_lower(char32_t c) { return c >= U'A' && c <= U'Z' ? c + (U'a' - U'A') : c; }

// cs: /^li$|^mail.*/i, the word after the dash in "je - li" or "e - mail".
bool is_czech_dash_suffix(Word w) {
  auto starts_with_folded = [w](Word prefix) {
    if (w.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i)
      if (ascii_lower(w[i]) != prefix[i]) return false;
    return true;
  };
  return (w.size() == 2 && starts_with_folded(U"li")) || starts_with_folded(U"mail");
}

// fi: /^(stem)(ni|si|mme|nne|nsa)?(ko|kö|han|hän|pa|pä|kaan|kään|kin)?$/, a case ending written
// after a colon ("EU : ssa" -> "EU:ssa"). Tried exhaustively, as the anchored regex backtracks.
bool is_finnish_case_suffix(Word w) {
  static constexpr Word kStems[] = {
      U"N",   U"n",   U"A",   U"a",   U"Ä",   U"ä",   U"ssa", U"Ssa", U"ssä", U"Ssä", U"sta", U"stä",
      U"Sta", U"Stä", U"hun", U"Hun", U"hyn", U"Hyn", U"han", U"Han", U"hän", U"Hän", U"hön", U"Hön",
      U"un",  U"Un",  U"yn",  U"Yn",  U"an",  U"An",  U"än",  U"Än",  U"ön",  U"Ön",  U"seen", U"Seen",
      U"lla", U"Lla", U"llä", U"Llä", U"lta", U"Lta", U"ltä", U"Ltä", U"lle", U"Lle", U"ksi", U"Ksi",
      U"kse", U"Kse", U"tta", U"Tta", U"ine", U"Ine"};
  static constexpr Word kPossessives[] = {U"", U"ni", U"si", U"mme", U"nne", U"nsa"};
  static constexpr Word kClitics[] = {U"", U"ko", U"kö", U"han", U"hän", U"pa", U"pä", U"kaan", U"kään", U"kin"};
  for (Word stem : kStems) {
    if (!w.starts_with(stem)) continue;
    for (Word possessive : kPossessives) {
      Word rest = w.substr(stem.size());
      if (!rest.starts_with(possessive)) continue;
      rest.remove_prefix(possessive.size());
      for (Word clitic : kClitics)
        if (rest == clitic) return true;
    }
  }
  return false;
}

// Perl's lc on a Finnish case ending (ASCII letters, Ä and Ö only).
Text lowercase_case_suffix(Word w) {
  Text out(w);
  for (char32_t& c : out) c = c == U'Ä' ? U'ä' : c == U'Ö' ? U'ö' : ascii_lower(c);
  return out;
}

// split(/ /, $text): empty fields kept, trailing ones dropped.
std::vector<Word> split_on_spaces(const Text& t) {
  std::vector<Word> words;
  Word rest(t);
  for (size_t space; (space = rest.find(U' ')) != Word::npos; rest.remove_prefix(space + 1))
    words.push_back(rest.substr(0, space));
  words.push_back(rest);
  while (!words.empty() && words.back().empty()) words.pop_back();
  return words;
}

// The entities tokenizer.perl writes (and two legacy ones), decoded in the script's order.
void decode_entities(Text& t) {
  static constexpr std::pair<std::u32string_view, std::u32string_view> kEntities[] = {
      {U"&bar;", U"|"},  {U"&#124;", U"|"}, {U"&lt;", U"<"},    {U"&gt;", U">"},
      {U"&bra;", U"["},  {U"&ket;", U"]"},  {U"&quot;", U"\""}, {U"&apos;", U"'"},
      {U"&#91;", U"["},  {U"&#93;", U"]"},  {U"&amp;", U"&"}};
  for (const auto& [entity, character] : kEntities) perl::replace_all(t, entity, character);
}

}  // namespace

MosesDetokenizer::MosesDetokenizer(MosesLanguage language) : language_(language) {}

bool MosesDetokenizer::passes_unchanged(const Text& line) {
  bool is_tag = line.size() >= 3 && line.front() == U'<' && line.back() == U'>';
  return is_tag || perl::is_blank(line);
}

std::string MosesDetokenizer::detokenize(std::string_view line) const {
  if (line.ends_with('\n')) line.remove_suffix(1);  // chomp
  Text text = perl::decode_utf8(line, "Moses detokenizer input");
  if (passes_unchanged(text)) return std::string(line);
  text = U" " + text + U" ";
  perl::replace_all(text, U" @-@ ", U"-");
  decode_entities(text);
  return perl::encode_utf8(join_tokens(text));
}

std::string MosesDetokenizer::detokenize_record(std::string_view record) const {
  std::string_view line = record.ends_with('\n') ? record.substr(0, record.size() - 1) : record;
  if (passes_unchanged(perl::decode_utf8(line, "Moses detokenizer input"))) return std::string(record);
  return detokenize(line) + "\n";
}

// The script's token walk: `prepend` is the space written before the next token ("" after a
// token that attaches to its right neighbour). The branches are tested in the script's order.
MosesDetokenizer::Text MosesDetokenizer::join_tokens(const Text& text) const {
  const MosesLanguage lang = language_;
  const bool english = lang == MosesLanguage::English, czech = lang == MosesLanguage::Czech;
  std::vector<Word> words = split_on_spaces(text);
  const size_t n = words.size();
  std::map<Text, int> quote_counts;
  Text out;
  out.reserve(text.size());
  Word prepend = U" ";
  auto attach_left = [&](Word w) { out.append(w); prepend = U" "; };
  auto attach_right = [&](Word w) { out.append(prepend).append(w); prepend = U""; };
  auto separate = [&](Word w) { out.append(prepend).append(w); prepend = U" "; };
  for (size_t i = 0; i < n; ++i) {
    Word w = words[i];
    // $words[$i-1]: for i == 0 Perl reads the last word (only the Finnish rule can see it).
    Word previous = i > 0 ? words[i - 1] : words.back();
    if (starts_with_cjk(w)) {
      if (i > 0 && ends_with_cjk(previous) && lang != MosesLanguage::Korean) attach_left(w); else separate(w);
    } else if (is_opening(w)) {
      attach_right(w);
    } else if (is_closing(w)) {
      // French puts a (no-break, here plain) space before ? ! : ; \ %, even after "(".
      if (lang == MosesLanguage::French && w.size() == 1 && Word(U"?!:;\\%").find(w[0]) != Word::npos) out.append(U" ");
      attach_left(w);
    } else if (english && i > 0 && is_contraction_after(w, previous)) {
      attach_left(w);
    } else if (czech && i > 1 && all_ascii_digits(words[i - 2]) && (previous == U"." || previous == U",") &&
               all_ascii_digits(w)) {
      attach_left(w);  // a decimal number: "3 , 14" -> "3,14"
    } else if ((lang == MosesLanguage::French || lang == MosesLanguage::Italian) && i + 2 <= n &&
               ends_in_elision(w) && !words[i + 1].empty() && perl::is_alpha(words[i + 1].front())) {
      attach_right(w);  // "l' homme" -> "l'homme"
    } else if (czech && i + 3 < n && !w.empty() && perl::is_alpha(w.back()) &&
               (words[i + 1] == U"-" || words[i + 1] == U"–") && is_czech_dash_suffix(words[i + 2])) {
      out.append(prepend).append(w).append(words[i + 1]);  // "je - li" -> "je-li"
      prepend = U"";
      ++i;
    } else if (is_quote(w)) {
      Text kind = quote_kind(w);
      int& count = quote_counts[kind];
      if (czech && w == U"„") count = 0;  // always opening in Czech
      if (czech && w == U"“") count = 1;  // usually closing in Czech
      bool opens = count % 2 == 0;
      if (opens && english && w == U"'" && i > 0 && previous.ends_with(U's')) {
        attach_left(w);  // possessive: "Jones '" -> "Jones'"
        continue;
      }
      if (opens) attach_right(w); else attach_left(w);
      ++count;
    } else if (lang == MosesLanguage::Finnish && previous.ends_with(U':') && is_finnish_case_suffix(w)) {
      attach_left(lowercase_case_suffix(w));  // "EU : ssa" -> "EU:ssa"
    } else {
      separate(w);
    }
  }
  perl::squeeze_spaces(out);
  return out;
}

}  // namespace attn::data
