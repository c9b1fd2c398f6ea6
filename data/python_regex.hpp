// Python's re syntax read into ICU's: subword-nmt's --glossaries are Python regular expressions,
// and attnlab matches them with ICU (data/bpe_apply.hpp, GlossaryRegex), whose syntax reads
// some constructs otherwise (docs/mt-tools.md §1.3).
#pragma once
#include <string>

namespace attn::data {

// A --glossaries regex (Python's re syntax) rewritten for ICU with the same meaning: Python's
// \s \w \b (and their negations), \v \Z, its numeric escapes, a '{' that is no quantifier,
// (?P<name>...), and punctuation inside [...] taken literally. DataError naming `label` for an
// escape that Python refuses (\p, \Q, \h, ...).
std::string python_regex_to_icu(const std::string& pattern, const std::string& label);

}  // namespace attn::data
