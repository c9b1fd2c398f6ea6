// Pieces shared by greedy and beam search (docs/models.md §1.10): the per-step constraints on
// the log-probabilities, and a hypothesis under construction with its cumulative scores (the
// output-length limit is nn::max_output_length, nn/search/hypothesis.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "nn/search/hypothesis.hpp"
#include "nn/search/model_ensemble.hpp"

namespace attn::nn::search_detail {

// The next-token log-probabilities [N, V] of the hypotheses whose last tokens are `tokens`:
// the models', interpolated with the kNN-MT datastore's when options.knn is set.
Tensor next_log_probs(const ModelEnsemble& models, const Tensor& tokens, ModelEnsemble::State& state, Tensor* attention,
                      const SearchOptions& options);

// In place on log-probabilities [N, V], in fairseq's order: NaN treated as −∞; pad never
// selected; <unk> lowered by options.unk_penalty; from step max_len on only </s>; before
// options.min_len no </s>, unless a prefix token is forced at this step (fairseq's
// --prefix-size overrides min_len).
void constrain_log_probs(Tensor& log_probs, int64_t step, int64_t max_len, const SearchOptions& options,
                         const TransformerConfig& config, bool forcing_prefix = false);

// In place on one hypothesis's log-probabilities [V]: every token but `token` gets −∞, which
// keeps its own (fairseq's prefix tokens).
void force_token(Tensor log_probs_row, int64_t token);

// A hypothesis being extended: generated tokens, cumulative log-probability after each,
// and (optionally) the cross-attention row of each step.
struct PartialHypothesis {
  std::vector<int64_t> tokens;
  std::vector<float> cumulative;
  std::vector<Tensor> attention;

  PartialHypothesis extended(int64_t token, float cumulative_score, const Tensor& attention_row) const;
  // The cumulative log-probability so far: 0 before the first token.
  float score() const { return cumulative.empty() ? 0.0f : cumulative.back(); }
  // In place on this hypothesis's next-token log-probabilities [V]: every token that would
  // repeat one of its n-grams gets −∞ (fairseq's --no-repeat-ngram-size). n must be ≥ 2.
  void block_repeated_ngrams(Tensor log_probs_row, int64_t n, int64_t eos) const;
  // The finished hypothesis ending in `eos` with cumulative score eos_score, normalised by
  // L^lenpen where L counts the tokens including </s>.
  Hypothesis finished(int64_t eos, float eos_score, const Tensor& attention_row, double lenpen) const;
};

// The tokens that would complete an n-gram already in `sequence` (fairseq's
// --no-repeat-ngram-size): those following an earlier occurrence of its last n − 1 tokens.
// `sequence` starts with the </s> that opens decoding, as fairseq's token buffer does.
std::vector<int64_t> repeated_ngram_endings(const std::vector<int64_t>& sequence, int64_t n);

// The cross-attention row of hypothesis `row` at this step, or undefined when not kept.
Tensor attention_row(const Tensor& step_attention, int64_t row);

}  // namespace attn::nn::search_detail
