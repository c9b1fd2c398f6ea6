// Text as the Moses Perl scripts see it (docs/mt-tools.md §0 "Perl Unicode properties"):
// UTF-8 <-> code points, the two string operations both scripts repeat, and the character
// classes tokenizer.perl and detokenizer.perl use, answered by ICU:
//   \p{IsAlpha} = Alphabetic            \p{IsAlnum} = Alphabetic ∪ Nd
//   \p{IsN}     = gc N (Nd|Nl|No)       \p{IsLower} = Lowercase
//   \p{IsSc}    = gc Sc                 \s          = White_Space ("PerlUWS")
//   \p{Ll}      = gc Ll
// with Perl's Unicode 14 values for the ten older characters whose Alphabetic or Lowercase
// property Unicode 15 (ICU 72) changed.
#pragma once
#include <string>
#include <string_view>

namespace attn::data::perl {

// Decodes UTF-8; throws DataError naming `what` and the byte offset when s is not valid UTF-8.
std::u32string decode_utf8(std::string_view s, std::string_view what);
void append_utf8(std::string& out, char32_t c);
std::string encode_utf8(std::u32string_view s);

// Perl s/\Qfrom\E/to/g: every non-overlapping occurrence, left to right.
void replace_all(std::u32string& text, std::u32string_view from, std::u32string_view to);
// Perl s/ +/ /g; s/^ //g; s/ $//g.
void squeeze_spaces(std::u32string& text);

bool is_alpha(char32_t c);
bool is_alnum(char32_t c);
bool is_number(char32_t c);
bool is_lower(char32_t c);
bool is_lowercase_letter(char32_t c);
bool is_currency(char32_t c);
bool is_space(char32_t c);

// True when every code point of s is \s (the empty string included): Perl's /^\s*$/.
bool is_blank(std::u32string_view s);

}  // namespace attn::data::perl
