// Moses remove-non-printing-char.perl (docs/mt-tools.md §2.5), the second step of fairseq's
// prepare-wmt14en2de.sh (§1.5 A): every code point of general category C (Cc control, Cf
// format, Cs surrogate, Co private use, Cn unassigned) becomes a space, e.g. tab, '\r', soft
// hyphen U+00AD, ZERO WIDTH SPACE U+200B, the BOM U+FEFF and bidi marks. Categories come
// from ICU (Unicode 15.0; Perl 5.36 has 14.0, so only characters new in 15.0 differ).
#pragma once
#include <string>
#include <string_view>

namespace attn::data {

// The line without its '\n'; throws DataError naming `what` on invalid UTF-8.
std::string remove_non_printing(std::string_view line, std::string_view what = "input");
// One record as the script reads it: the line with its '\n', which the script chomps and
// prints again, so a last line without '\n' gains one.
std::string remove_non_printing_record(std::string_view record, std::string_view what = "input");

}  // namespace attn::data
