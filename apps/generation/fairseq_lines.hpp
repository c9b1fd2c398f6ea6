// The lines fairseq-generate and fairseq-interactive print for a hypothesis (docs/models.md
// §1.10): H- (score and tokens), D- (score and detokenized text) and P- (each token's
// log-probability), scores in base 2 as current fairseq prints them (score / ln 2), and A-
// (--print-alignment, §1.10.3).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/search/hypothesis.hpp"

namespace attn::app {

// H-i, D-i and P-i of hypothesis h of sentence i, each ending in a newline; `text` is its tokens
// as printed in H-, `detokenized` the D- text.
std::string hypothesis_lines(size_t i, const nn::Hypothesis& h, const std::string& text,
                             const std::string& detokenized);

// A-i of hypothesis h (its attention kept) of sentence i with source ids `source`: `kind` "hard"
// (source-target index pairs) or "soft" (the weights); "" gives no line.
std::string alignment_line(size_t i, const nn::Hypothesis& h, const std::vector<int64_t>& source,
                           const std::string& kind);

}  // namespace attn::app
