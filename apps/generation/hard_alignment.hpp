// Word alignments read off the attention, as `fairseq-generate --print-alignment` prints them
// (its A- lines; docs/models.md §1.10.3): each output token is aligned to the source token its
// cross-attention weighs most (last decoder layer, heads averaged, as the search keeps it).
// Indices count the tokens that are neither <pad> nor </s>, from 0, on both sides.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace attn::app {

struct AlignedPair {
  int64_t source = 0, target = 0;
};

// attention float32 [T, S] with T = target.size() and S ≥ source.size(): the source row as
// the search saw it, left-padded to S. The first of equal weights wins. Empty when the source
// or the target has no token but </s>.
std::vector<AlignedPair> hard_alignment(const Tensor& attention, const std::vector<int64_t>& source,
                                        const std::vector<int64_t>& target, int64_t pad, int64_t eos);

// "0-0 2-1 1-2": source-target pairs in target order, fairseq's A- line.
std::string format_alignment(const std::vector<AlignedPair>& alignment);

}  // namespace attn::app
