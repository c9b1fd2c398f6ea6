// The generation driver (docs/models.md §1.10, docs/design.md §6): sentences of token ids →
// batches (data::inference_batches: sorted by length, left-padded sources, cut by
// --max-tokens / --batch-size as fairseq's inference batches) → beam search (greedy when
// beam = 1) → hypotheses back in the input order. Used by `generate`, `translate` and the demo.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/search/hypothesis.hpp"
#include "nn/search/model_ensemble.hpp"

namespace attn::app {

struct DecodingOptions {
  nn::SearchOptions search;
  int64_t max_tokens = 0;     // per batch, padding included (<= 0: no limit)
  int64_t max_sentences = 0;  // per batch (<= 0: no limit; both <= 0: 128 sentences)
};

// Refuses (attn::Error) a source of `length` tokens (</s> included) longer than the models'
// max_source_positions, naming `where` ("<stdin>:3"): as fairseq, which refuses such
// inputs too, rather than translating a silently truncated sentence.
void check_source_length(const nn::ModelEnsemble& models, size_t length, const std::string& where);

// Hypotheses (options.search.nbest, best first) of every source sentence (ids ending in
// </s>), in input order; every sentence has at least one. Throws attn::Error when a
// hypothesis scores NaN or −∞ (the model produced NaN), a source is longer than the models'
// positions, or min_len is larger than a sentence's max_len (before any search, as fairseq).
// One model or an ensemble (nn/search/model_ensemble.hpp). `on_batch` (optional) is called
// with the number of sentences done. `prefixes` (optional, one per source): the tokens each
// sentence's hypotheses must begin with (generate's --prefix-size). `constraints` (one per
// source when options.search.constraint_order is set): the token sequences each sentence's
// hypotheses must contain (translate's --constraints).
std::vector<std::vector<nn::Hypothesis>> translate_sentences(const nn::ModelEnsemble& models,
                                                             const std::vector<std::vector<int64_t>>& sources,
                                                             const DecodingOptions& options,
                                                             const std::function<void(size_t)>& on_batch = {},
                                                             const std::vector<std::vector<int64_t>>& prefixes = {},
                                                             const std::vector<nn::Constraints>& constraints = {});

// fairseq-generate --score-reference (its SequenceScorer): each target (ids ending in </s>)
// scored as the hypothesis of its source, teacher-forced in one full forward per batch (the
// targets right-padded to the batch's longest, as fairseq's): positional_scores the log-probability of each target token (an ensemble's mean
// probability), score their sum over the target's length (</s> included), attention the
// cross-attention rows when options.search.return_attention. Batched as translate_sentences.
std::vector<nn::Hypothesis> score_references(const nn::ModelEnsemble& models,
                                             const std::vector<std::vector<int64_t>>& sources,
                                             const std::vector<std::vector<int64_t>>& targets,
                                             const DecodingOptions& options);

}  // namespace attn::app
