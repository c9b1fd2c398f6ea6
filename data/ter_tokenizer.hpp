// The words TER compares: sacreBLEU 2.6.0's Tercom tokenizer (`sacrebleu -m ter`,
// docs/mt-tools.md §3.10), a rewrite of Tercom's Normalizer.
//
// A segment loses its trailing Python whitespace (PyWS) and, unless case_sensitive, is
// lower-cased with Python's lower(). Then, in this order:
//   normalized      decodes &quot; &amp; &lt; &gt;, pads ASCII punctuation and symbols (not
//                   ' , - .), splits off a possessive 's, a period or comma not between digits
//                   and a hyphen after a digit; with asian_support also every CJK ideograph,
//                   stroke, radical, compatibility character and CJK or fullwidth punctuation;
//   no_punct        removes . , ? : ; ! " ( ) and, with asian_support, the CJK and fullwidth
//                   punctuation;
// and the result is split on PyWS. asian_support alone changes nothing.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

// sacreBLEU's --ter-* options; the defaults are Tercom's.
struct TerOptions {
  bool case_sensitive = false;  // --ter-case-sensitive
  bool normalized = false;      // --ter-normalized
  bool no_punct = false;        // --ter-no-punct
  bool asian_support = false;   // --ter-asian-support
};

// The words of one segment (valid UTF-8, as read) as TER sees them.
std::vector<std::string> ter_words(std::string_view segment, const TerOptions& options);

}  // namespace attn::data
