#include "nn/search/greedy_search.hpp"

#include <cmath>

#include "nn/search/search_common.hpp"

namespace attn::nn {

using search_detail::PartialHypothesis;

std::vector<Hypothesis> greedy_search(const ModelEnsemble& models, const Tensor& src_tokens,
                                      const SearchOptions& options) {
  ATTN_CHECK(src_tokens.dim() == 2 && src_tokens.dtype() == DType::Int64,
             "greedy_search: src_tokens must be int64 [B, S], got {} {}", dtype_name(src_tokens.dtype()),
             src_tokens.shape().str());
  NoGradGuard no_grad;
  const TransformerConfig& config = models.config();
  const int64_t batch = src_tokens.size(0), eos = config.eos_idx;
  const Device device = src_tokens.device();
  const int64_t max_len = max_output_length(options, src_tokens.size(1), models.max_target_positions());

  ModelEnsemble::State state = models.start(src_tokens);
  std::vector<Hypothesis> results(batch);
  std::vector<int64_t> sentence_of_row(batch);  // the rows still decoding, by sentence
  std::vector<PartialHypothesis> rows(batch);
  for (int64_t i = 0; i < batch; ++i) sentence_of_row[i] = i;
  Tensor last_tokens = full({batch}, double(eos), DType::Int64, device);

  for (int64_t step = 0; step <= max_len && !sentence_of_row.empty(); ++step) {
    Tensor attention;
    Tensor log_probs = search_detail::next_log_probs(models, last_tokens, state,
                                                        options.return_attention ? &attention : nullptr, options);
    search_detail::constrain_log_probs(log_probs, step, max_len, options, config);
    if (options.no_repeat_ngram_size != 0)
      for (size_t r = 0; r < rows.size(); ++r)
        rows[r].block_repeated_ngrams(log_probs.select(0, int64_t(r)), options.no_repeat_ngram_size, eos);
    // Cumulative scores in float32, as beam search forms them, so greedy == beam 1 exactly.
    std::vector<float> previous;
    for (const search_detail::PartialHypothesis& row : rows) previous.push_back(row.score());
    std::vector<double> best_scores, best_tokens;
    if (options.sampling) {  // the drawn token, scored as beam search with beam 1 scores it
      const std::vector<Draw> draws = sample_tokens(log_probs, *options.sampling);
      for (size_t r = 0; r < rows.size(); ++r) {
        best_tokens.push_back(double(draws[r].token));
        best_scores.push_back(double(previous[r] + draws[r].log_prob));
      }
    } else {
      Tensor totals = ops::add(log_probs, from_vector(previous, {int64_t(rows.size()), 1}, device));
      ops::ValuesIndices best = ops::topk(totals, 1);
      best_scores = best.values.to_vector();
      best_tokens = best.indices.to_vector();
    }

    std::vector<int64_t> keep, next_sentences, next_tokens;
    std::vector<PartialHypothesis> next_rows;
    for (size_t r = 0; r < rows.size(); ++r) {
      const float score = float(best_scores[r]);
      const int64_t token = int64_t(best_tokens[r]);
      const Tensor row_attention = search_detail::attention_row(attention, int64_t(r));
      // As in beam search, </s> scoring −∞ (a NaN model) does not finish a row, but at
      // max_len the row is closed anyway rather than left without a hypothesis.
      if ((token == eos && !std::isinf(score)) || step >= max_len) {
        results[sentence_of_row[r]] = rows[r].finished(eos, score, row_attention, options.lenpen);
        continue;
      }
      keep.push_back(int64_t(r));
      next_sentences.push_back(sentence_of_row[r]);
      next_tokens.push_back(token);
      next_rows.push_back(rows[r].extended(token, score, row_attention));
    }
    if (keep.empty()) break;
    if (keep.size() != rows.size()) models.reorder(state, from_vector(keep, {int64_t(keep.size())}, device));
    sentence_of_row = std::move(next_sentences);
    rows = std::move(next_rows);
    last_tokens = from_vector(next_tokens, {int64_t(next_tokens.size())}, device);
  }
  return results;
}

}  // namespace attn::nn
