// Greedy decoding (docs/models.md §1.10 with beam 1): at each step the most probable
// non-pad token (with options.sampling, a drawn one: §1.10.4); max_len, min_len and the score S = Σ log p / L^lenpen as in beam search,
// so greedy_search(...) equals beam_search(..., beam = 1). Batched: finished sentences stop
// being decoded.
#pragma once
#include <vector>

#include "nn/search/hypothesis.hpp"
#include "nn/search/model_ensemble.hpp"

namespace attn::nn {

// src_tokens int64 [B, S] (left-padded). One hypothesis per sentence; options.beam and
// options.nbest are ignored.
std::vector<Hypothesis> greedy_search(const ModelEnsemble& models, const Tensor& src_tokens,
                                      const SearchOptions& options);

}  // namespace attn::nn
