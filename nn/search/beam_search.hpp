// Batched beam search on the incremental decoder state with fairseq's semantics
// (docs/models.md §1.10; fairseq sequence_generator.py / search.py):
// * scores are cumulative log-probabilities; the pad token is never selected;
// * at step 0 only beam 0 is expanded;
// * the top 2·beam candidates over (beam × V) cumulative scores are taken;
// * candidates ending in </s> among the first `beam` candidates are finalised with
//   S = Σ log p / L^lenpen, L = generated tokens including </s>;
// * the best non-</s> candidates refill the beam; a sentence is done once it has `beam`
//   finalised hypotheses (no early-stop bound);
// * from step max_len = min(a·src_len + b, max_positions − 1) on, only </s> is allowed
//   (src_len = the padded source length); before min_len, </s> is forbidden;
// * a sentence none of whose candidates can end at max_len (every score −∞, as when the
//   model gives NaN) gets its best hypothesis closed with </s>, scoring −∞: every sentence
//   has at least one hypothesis, as in greedy search;
// * the output is sorted by normalised score, best first.
// fairseq's other search strategies (docs/models.md §1.10.5): prefix tokens (generate's --prefix-size: every hypothesis
// of a sentence begins with the given tokens, min_len not applied while they are forced),
// diverse beam search (options.diverse_beam_groups: search.DiverseBeamSearch, beam candidates
// in all, interleaved across groups) and options.match_source_len (search.LengthConstrained-
// BeamSearch: </s> forbidden before the source's length, </s> of log-probability 0 from there,
// max_len the padded source length, an end past its source's length scored −∞) and diverse
// siblings (options.diversity_rate: search.DiverseSiblingsSearch), and lexical constraints
// (options.constraint_order: search.LexicallyConstrainedBeamSearch, docs/models.md §1.10.6).
#pragma once
#include <vector>

#include "nn/search/hypothesis.hpp"
#include "nn/search/model_ensemble.hpp"

namespace attn::nn {

// src_tokens int64 [B, S] (left-padded). Returns, per sentence, options.nbest hypotheses.
// `prefixes`: none, or one per sentence (token ids, possibly empty) that its hypotheses must
// begin with. `constraints`: with options.constraint_order, one per sentence (possibly none),
// the token sequences its hypotheses must contain; excludes prefixes. Runs without gradients;
// the models should be in eval mode. A model converts to an ensemble of one
// (nn/search/model_ensemble.hpp).
std::vector<std::vector<Hypothesis>> beam_search(const ModelEnsemble& models, const Tensor& src_tokens,
                                                 const SearchOptions& options,
                                                 const std::vector<std::vector<int64_t>>& prefixes = {},
                                                 const std::vector<Constraints>& constraints = {});

}  // namespace attn::nn
