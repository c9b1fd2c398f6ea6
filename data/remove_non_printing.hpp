// Moses remove-non-printing-char.perl (docs/mt-tools.md §2.5), the second step of fairseq's
// prepare-wmt14en2de.sh (§1.5 A): every code point of general category C (Cc control, Cf
// format, Cs surrogate, Co private use, Cn unassigned) becomes a space, e.g. tab, '\r', soft
// hyphen U+00AD, ZERO WIDTH SPACE U+200B, the BOM U+FEFF and bidi marks. Categories come
// from ICU (Unicode 15.0; Perl 5.36 has 14.0, so only characters new in 15.0 differ).
//
// The script decodes its input loosely, as Perl's :utf8 layer does: besides well-formed UTF-8
// it takes encoded surrogates (ED A0 80 .. ED BF BF, the halves of CESU-8 text) and values
// above U+10FFFF in the 4- to 7-byte forms (F4 90 80 80 .. FE BF ..), and \p{C} matches
// both, so each such sequence becomes one space too. What the script dies on (overlong forms,
// truncated sequences, stray continuation bytes, C0, C1, FF) is an error here.
#pragma once
#include <string>
#include <string_view>

namespace attn::data {

// The line without its '\n'; throws DataError "invalid UTF-8 at byte N" on input the script
// cannot decode.
std::string remove_non_printing(std::string_view line);
// One record as the script reads it: the line with its '\n', which the script chomps and
// prints again, so a last line without '\n' gains one.
std::string remove_non_printing_record(std::string_view record);

}  // namespace attn::data
