// How BLEU scorers cut a line into tokens (docs/mt-tools.md §0 whitespace sets, §3.1, §3.2,
// §3.4, §3.5). Each scorer has its own rules and the differences change scores:
//
//   sacreBLEU   rstrip() → lower() (full Unicode) → tokenizer 13a | intl | zh | char | none →
//               str.split() on Python whitespace (PyWS, code points);
//   multi-bleu  Perl `lc` (ASCII A–Z only) → split on the ASCII whitespace bytes (PerlBWS);
//   fairseq     Python lower() → split on PyWS.
//
// Also the WMT14 EN-DE compound splitting ("##AT##-##AT##", §3.5) applied before scoring.
// All functions take and return UTF-8; byte-level rules (13a, ATAT, PerlBWS) are exactly
// equivalent on UTF-8 to the code-point rules of the originals (§6).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

// sacreBLEU's tokenizers (`--tokenize`); char is sacreBLEU's character-level tokenizer.
enum class BleuTokenizer { k13a, kIntl, kZh, kChar, kNone };

// "13a" | "intl" | "zh" | "char" | "none"; anything else throws DataError listing the choices.
BleuTokenizer parse_bleu_tokenizer(std::string_view name);
// Every name parse_bleu_tokenizer accepts, in that order (for a command line's choices).
std::vector<std::string> bleu_tokenizer_names();
// The name as it appears in sacreBLEU's signature (`tok:13a`).
std::string_view bleu_tokenizer_name(BleuTokenizer tokenizer);

// Tokenizer13a (mteval-v13a): drops `<skipped>`, joins `-\n`, decodes &quot; &amp; &lt; &gt;,
// pads ASCII punctuation and symbols, splits period/comma except inside numbers, dash after
// a digit; single spaces, no leading/trailing space.
std::string tokenize_13a(std::string_view line);
// TokenizerV14International: splits Unicode punctuation (\p{P}) not between digits, and
// symbols (\p{S}) everywhere; single spaces.
std::string tokenize_intl(std::string_view line);
// TokenizerZh: strips PyWS at both ends, puts spaces around each character that sacreBLEU
// counts as Chinese (is_sacrebleu_chinese_character), then applies the 13a padding and
// splitting rules without 13a's `<skipped>`, `-\n` and entity steps and without its added
// end spaces (so `中5.` keeps `5.`); single spaces.
std::string tokenize_zh(std::string_view line);
// The characters tokenize_zh separates, 13 ranges: CJK ideographs of the BMP (Extension A to
// U+4DB5, unified to U+9FBB, compatibility), radicals, strokes, ideographic description, CJK
// punctuation, Bopomofo, enclosed CJK and CJK compatibility, vertical and small forms,
// fullwidth and halfwidth forms (halfwidth kana and Hangul included) — and U+2001–U+2A6D
// (general punctuation to supplemental math operators), sacreBLEU's reading of its own
// Extension B bounds. Not Extension B and later, kana (U+3040–U+30FF), Hangul syllables.
bool is_sacrebleu_chinese_character(char32_t c);
// TokenizerChar: every code point joined by one space (spaces included, as sacreBLEU does).
std::string tokenize_char(std::string_view line);
// Applies the chosen tokenizer (kNone returns the line unchanged).
std::string apply_bleu_tokenizer(BleuTokenizer tokenizer, std::string_view line);

// Python str.isspace() for one code point (the PyWS set).
bool is_python_whitespace(char32_t c);
// Python str.split(): tokens separated by runs of PyWS, none empty.
std::vector<std::string_view> split_python_whitespace(std::string_view line);
// Python str.rstrip(): line without trailing PyWS.
std::string_view rstrip_python_whitespace(std::string_view line);
// Python str.strip(): line without leading and trailing PyWS.
std::string_view strip_python_whitespace(std::string_view line);
// Python str.lower(): full Unicode lower-casing (ICU root locale, incl. final sigma).
std::string python_lower(std::string_view line);

// Perl `split` on an undecoded byte string: tokens separated by runs of the bytes
// \t \n \v \f \r and space; UTF-8 NBSP is part of a token.
std::vector<std::string_view> split_perl_byte_whitespace(std::string_view line);
// Perl `lc` on bytes: A–Z only; `Ä` stays.
std::string ascii_lower(std::string_view line);

// WMT14 EN-DE compound splitting, `perl -ple 's{(\S)-(\S)}{$1 ##AT##-##AT## $2}g'` on bytes:
// global and non-overlapping, so `a-b-c` → `a ##AT##-##AT## b-c`.
std::string compound_split(std::string_view line);

}  // namespace attn::data
