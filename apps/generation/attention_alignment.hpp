// Alignments read off the attention, as `fairseq-generate --print-alignment` prints them (its
// A- lines; docs/models.md §1.10.3), from the cross-attention the search keeps (last decoder
// layer, heads averaged). Hard (the default): each output token is aligned to the source token
// its cross-attention weighs most; indices count the tokens that are neither <pad> nor </s>,
// from 0, on both sides. Soft: the weights themselves.
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
// the search saw it, left-padded to S. For each target position whose token is neither <pad>
// nor </s>, the position in `source` (not counting the padding) of the token, neither <pad>
// nor </s>, that it attends to most, the first of equal weights; -1 for the others, and for
// all when the source has no token but </s>.
std::vector<int64_t> attended_source_positions(const Tensor& attention, const std::vector<int64_t>& source,
                                               const std::vector<int64_t>& target, int64_t pad, int64_t eos);

// The same as (source, target) index pairs in target order. Empty when the source or the
// target has no token but </s>.
std::vector<AlignedPair> hard_alignment(const Tensor& attention, const std::vector<int64_t>& source,
                                        const std::vector<int64_t>& target, int64_t pad, int64_t eos);

// "0-0 2-1 1-2": source-target pairs in target order, fairseq's A- line.
std::string format_alignment(const std::vector<AlignedPair>& alignment);

// --print-alignment soft: for each target token (</s> included) the weights of the source
// tokens (</s> included, the padding left out) as "%.6f", comma-separated; target tokens
// separated by spaces: "0.712345,0.287655 0.100000,0.900000". attention as for hard_alignment.
std::string format_soft_alignment(const Tensor& attention, const std::vector<int64_t>& source,
                                  const std::vector<int64_t>& target);

}  // namespace attn::app
