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
// token that attaches to its right neighbour).
MosesDetokenizer::Text MosesDetokenizer::join_tokens(const Text& text) const {
  const bool english = language_ == MosesLanguage::English;
  std::vector<Word> words = split_on_spaces(text);
  std::map<Text, int> quote_counts;
  Text out;
  out.reserve(text.size());
  Word prepend = U" ";
  auto attach_left = [&](Word w) { out.append(w); prepend = U" "; };
  auto attach_right = [&](Word w) { out.append(prepend).append(w); prepend = U""; };
  auto separate = [&](Word w) { out.append(prepend).append(w); prepend = U" "; };
  for (size_t i = 0; i < words.size(); ++i) {
    Word w = words[i];
    Word previous = i > 0 ? words[i - 1] : Word{};
    if (starts_with_cjk(w)) {
      if (ends_with_cjk(previous)) attach_left(w); else separate(w);
    } else if (is_opening(w)) {
      attach_right(w);
    } else if (is_closing(w)) {
      attach_left(w);
    } else if (english && is_contraction_after(w, previous)) {
      attach_left(w);
    } else if (is_quote(w)) {
      int& count = quote_counts[quote_kind(w)];
      bool opens = count % 2 == 0;
      if (opens && english && w == U"'" && previous.ends_with(U's')) {
        attach_left(w);  // possessive: "Jones '" -> "Jones'"
        continue;
      }
      if (opens) attach_right(w); else attach_left(w);
      ++count;
    } else {
      separate(w);
    }
  }
  perl::squeeze_spaces(out);
  return out;
}

}  // namespace attn::data
