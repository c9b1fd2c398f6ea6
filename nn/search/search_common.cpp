#include "nn/search/search_common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/ops.hpp"
#include "nn/search/knn_datastore.hpp"

namespace attn::nn {

int64_t max_output_length(const SearchOptions& o, int64_t src_len, int64_t max_positions) {
  const double length = o.match_source_len ? double(src_len) : o.max_len_a * double(src_len) + double(o.max_len_b);
  ATTN_CHECK(std::isfinite(length), "search: max_len = {} * {} + {} is not a number", o.max_len_a, src_len,
             o.max_len_b);
  // Clamped in double first: converting a double beyond int64's range is undefined.
  const double limit = double(max_positions - 1);
  return int64_t(std::clamp(length, 0.0, std::max(limit, 0.0)));
}

}  // namespace attn::nn

namespace attn::nn::search_detail {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

Tensor next_log_probs(const ModelEnsemble& models, const Tensor& tokens, ModelEnsemble::State& state, Tensor* attention,
                      const SearchOptions& options) {
  if (!options.knn) return models.decode_step(tokens, state, attention, nullptr, options.temperature);
  Tensor features;
  Tensor log_probs = models.decode_step(tokens, state, attention, &features, options.temperature);
  return interpolate_knn(*options.knn, features, log_probs);
}

void constrain_log_probs(Tensor& log_probs, int64_t step, int64_t max_len, const SearchOptions& options,
                         const TransformerConfig& config, bool forcing_prefix) {
  const int64_t eos = config.eos_idx;
  // NaN != NaN: fairseq maps NaN scores to −∞ before choosing.
  Tensor nan = ops::ne(log_probs, log_probs);
  log_probs.copy_(ops::masked_fill(log_probs, nan, kMinusInfinity));
  log_probs.select(1, config.padding_idx).fill_(kMinusInfinity);
  if (options.unk_penalty != 0.0) {
    Tensor unk = log_probs.select(1, config.unk_idx);
    unk.copy_(ops::sub(unk, options.unk_penalty));
  }
  if (step >= max_len) {
    Tensor eos_column = log_probs.select(1, eos).clone();
    log_probs.fill_(kMinusInfinity);
    log_probs.select(1, eos).copy_(eos_column);
  } else if (step < options.min_len && !forcing_prefix) {
    log_probs.select(1, eos).fill_(kMinusInfinity);
  }
}

void force_token(Tensor log_probs_row, int64_t token) {
  const Tensor kept = log_probs_row.select(0, token).clone();
  log_probs_row.fill_(kMinusInfinity);
  log_probs_row.select(0, token).copy_(kept);
}

std::vector<int64_t> repeated_ngram_endings(const std::vector<int64_t>& sequence, int64_t n) {
  std::vector<int64_t> banned;
  const int64_t length = int64_t(sequence.size());
  if (n < 1 || length < n - 1) return banned;
  const auto suffix = sequence.end() - (n - 1);
  for (int64_t start = 0; start + n <= length; ++start)
    if (std::equal(suffix, sequence.end(), sequence.begin() + start)) banned.push_back(sequence[size_t(start + n - 1)]);
  return banned;
}

void PartialHypothesis::block_repeated_ngrams(Tensor log_probs_row, int64_t n, int64_t eos) const {
  ATTN_CHECK(n >= 2,
             "search: no_repeat_ngram_size must be 0 (off) or at least 2, got {} (1 would forbid </s>, which opens "
             "every hypothesis)",
             n);
  std::vector<int64_t> sequence = {eos};
  sequence.insert(sequence.end(), tokens.begin(), tokens.end());
  for (int64_t token : repeated_ngram_endings(sequence, n)) log_probs_row.select(0, token).fill_(kMinusInfinity);
}

PartialHypothesis PartialHypothesis::extended(int64_t token, float cumulative_score, const Tensor& row) const {
  PartialHypothesis next = *this;
  next.tokens.push_back(token);
  next.cumulative.push_back(cumulative_score);
  if (row.defined()) next.attention.push_back(row);
  return next;
}

Hypothesis PartialHypothesis::finished(int64_t eos, float eos_score, const Tensor& row, double lenpen) const {
  PartialHypothesis full = extended(eos, eos_score, row);
  Hypothesis h;
  h.tokens = full.tokens;
  h.score = double(eos_score) / std::pow(double(full.tokens.size()), lenpen);
  float previous = 0.0f;
  for (float c : full.cumulative) {
    h.positional_scores.push_back(double(c - previous));
    previous = c;
  }
  if (!full.attention.empty()) h.attention = ops::stack(full.attention, 0);
  return h;
}

Tensor attention_row(const Tensor& step_attention, int64_t row) {
  return step_attention.defined() ? step_attention.select(0, row).to(DType::Float32) : Tensor();
}

}  // namespace attn::nn::search_detail
