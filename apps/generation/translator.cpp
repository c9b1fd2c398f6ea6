// Batched decoding in input order. See translator.hpp.
#include "apps/generation/translator.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/core.h>

#include "apps/task/batch_tensors.hpp"
#include "autograd/autograd.hpp"
#include "autograd/ops.hpp"
#include "data/batching.hpp"
#include "nn/search/beam_search.hpp"
#include "nn/search/greedy_search.hpp"

namespace attn::app {
namespace {

constexpr int64_t kDefaultSentences = 128;

data::BatchingOptions inference_batching(const DecodingOptions& options) {
  data::BatchingOptions batching;
  batching.max_tokens = options.max_tokens;
  batching.max_sentences =
      options.max_sentences > 0 || options.max_tokens > 0 ? options.max_sentences : kDefaultSentences;
  return batching;
}

// Search maps NaN log-probabilities to −∞, so a hypothesis scoring −∞ (or NaN) means the
// model's outputs were not numbers: its tokens are arbitrary and must not be printed.
void check_scores_finite(const std::vector<nn::Hypothesis>& hypotheses, int64_t sentence) {
  for (const nn::Hypothesis& h : hypotheses)
    if (!std::isfinite(h.score))
      throw Error(fmt::format("the model produced NaN (or infinite) scores for sentence {} (0-based): its weights "
                              "or its inputs give no usable translation; check the checkpoint",
                              sentence));
}

// The models in eval mode and every source checked against their positions, then the
// inference batches of the sources (sorted by length, cut by options).
std::vector<data::Batch> checked_batches(const nn::ModelEnsemble& models,
                                         const std::vector<std::vector<int64_t>>& sources,
                                         const DecodingOptions& options) {
  models.eval();
  for (size_t i = 0; i < sources.size(); ++i)
    check_source_length(models, sources[i].size(), fmt::format("sentence {}", i));
  return data::inference_batches(sources, inference_batching(options));
}

// fairseq's generator refuses a batch whose max_len is below min_len ("min_len cannot be larger
// than max_len"), where the search would cut every hypothesis at max_len, shorter than asked,
// without a word. Checked for every batch before any is searched; the sentences of a batch share
// its max_len (it counts the padded source), and the error names its first.
void check_min_len(const nn::ModelEnsemble& models, const std::vector<data::Batch>& batches,
                   const nn::SearchOptions& search) {
  const int64_t positions = models.max_target_positions();
  for (const data::Batch& batch : batches) {
    const int64_t max_len = nn::max_output_length(search, batch.source_len, positions);
    if (search.min_len > max_len)
      throw Error(fmt::format("--min-len {} is larger than the longest output sentence {} (0-based) may have, {} "
                              "tokens: min(--max-len-a {} × {} source tokens (its batch's longest, </s> included) + "
                              "--max-len-b {}, the model's max_target_positions {} − 1); fairseq refuses this too",
                              search.min_len, batch.ids.front(), max_len, search.max_len_a, batch.source_len,
                              search.max_len_b, positions));
  }
}

}  // namespace

void check_source_length(const nn::ModelEnsemble& models, size_t length, const std::string& where) {
  const int64_t limit = models.max_source_positions();
  if (int64_t(length) > limit)
    throw Error(fmt::format("{}: the source has {} tokens (</s> included), more than the model's "
                            "max_source_positions {}; split the sentence",
                            where, length, limit));
}

std::vector<std::vector<nn::Hypothesis>> translate_sentences(const nn::ModelEnsemble& models,
                                                             const std::vector<std::vector<int64_t>>& sources,
                                                             const DecodingOptions& options,
                                                             const std::function<void(size_t)>& on_batch,
                                                             const std::vector<std::vector<int64_t>>& prefixes,
                                                             const std::vector<nn::Constraints>& constraints) {
  ATTN_CHECK(prefixes.empty() || prefixes.size() == sources.size(), "translate_sentences: {} prefixes for {} sources",
             prefixes.size(), sources.size());
  const nn::SearchOptions& search = options.search;
  ATTN_CHECK(!search.constraint_order || constraints.size() == sources.size(),
             "translate_sentences: {} sentences' constraints for {} sources", constraints.size(), sources.size());
  // Greedy search is beam search with one hypothesis, without fairseq's other strategies but
  // sampling (which wins over any other, as in fairseq).
  const bool greedy = search.beam == 1 && prefixes.empty() && (search.sampling || !search.alternative_strategy()) &&
                      !search.constraint_order;
  NoGradGuard no_grad;
  std::vector<std::vector<nn::Hypothesis>> results(sources.size());
  const std::vector<data::Batch> batches = checked_batches(models, sources, options);
  check_min_len(models, batches, options.search);
  size_t done = 0;
  for (const data::Batch& batch : batches) {
    const Tensor src = to_tensors(batch, models.device()).src_tokens;
    std::vector<std::vector<nn::Hypothesis>> hypotheses;
    if (greedy) {
      for (nn::Hypothesis& best : nn::greedy_search(models, src, search)) hypotheses.push_back({std::move(best)});
    } else {
      std::vector<std::vector<int64_t>> batch_prefixes;
      std::vector<nn::Constraints> batch_constraints;
      for (int64_t id : batch.ids) {
        if (!prefixes.empty()) batch_prefixes.push_back(prefixes[size_t(id)]);
        if (search.constraint_order) batch_constraints.push_back(constraints[size_t(id)]);
      }
      hypotheses = nn::beam_search(models, src, search, batch_prefixes, batch_constraints);
    }
    for (size_t r = 0; r < batch.ids.size(); ++r) {
      check_scores_finite(hypotheses[r], batch.ids[r]);
      for (nn::Hypothesis& h : hypotheses[r])  // callers print alignments from host memory
        if (h.attention.defined()) h.attention = h.attention.to(Device::cpu());
      results[size_t(batch.ids[r])] = std::move(hypotheses[r]);
    }
    done += batch.ids.size();
    if (on_batch) on_batch(done);
  }
  return results;
}

std::vector<nn::Hypothesis> score_references(const nn::ModelEnsemble& models,
                                             const std::vector<std::vector<int64_t>>& sources,
                                             const std::vector<std::vector<int64_t>>& targets,
                                             const DecodingOptions& options) {
  ATTN_CHECK(sources.size() == targets.size(), "score_references: {} sources but {} targets", sources.size(),
             targets.size());
  for (size_t i = 0; i < targets.size(); ++i)
    ATTN_CHECK(!targets[i].empty(), "score_references: the target of sentence {} is empty (not even </s>)", i);
  NoGradGuard no_grad;
  const nn::TransformerConfig& config = models.config();
  std::vector<nn::Hypothesis> results(sources.size());
  for (const data::Batch& batch : checked_batches(models, sources, options)) {
    size_t longest = 0;
    for (int64_t id : batch.ids) longest = std::max(longest, targets[size_t(id)].size());
    // </s> y_1 … y_{n−1} and y_1 … y_n, right-padded (docs/models.md §1.1).
    const Shape shape{int64_t(batch.ids.size()), int64_t(longest)};
    std::vector<int64_t> previous(batch.ids.size() * longest, config.padding_idx), next = previous;
    for (size_t r = 0; r < batch.ids.size(); ++r) {
      const std::vector<int64_t>& target = targets[size_t(batch.ids[r])];
      previous[r * longest] = config.eos_idx;
      std::copy(target.begin(), target.end() - 1, previous.begin() + std::ptrdiff_t(r * longest + 1));
      std::copy(target.begin(), target.end(), next.begin() + std::ptrdiff_t(r * longest));
    }
    Tensor attention;
    const std::vector<double> log_probs =
        models
            .target_log_probs(to_tensors(batch, models.device()).src_tokens,
                              from_vector(previous, shape, models.device()), from_vector(next, shape, models.device()),
                              options.search.return_attention ? &attention : nullptr)
            .to_vector();
    for (size_t r = 0; r < batch.ids.size(); ++r) {
      nn::Hypothesis& h = results[size_t(batch.ids[r])];
      h.tokens = targets[size_t(batch.ids[r])];
      const int64_t length = int64_t(h.tokens.size());
      const auto row = log_probs.begin() + std::ptrdiff_t(r * longest);
      h.positional_scores.assign(row, row + length);
      h.score = std::accumulate(row, row + length, 0.0) / double(length);
      if (attention.defined())
        h.attention = attention.select(0, int64_t(r)).narrow(0, 0, length).to(DType::Float32).to(Device::cpu());
    }
  }
  return results;
}

}  // namespace attn::app
