// Batched decoding in input order. See translator.hpp.
#include "apps/generation/translator.hpp"

#include <cmath>

#include <fmt/format.h>

#include "apps/task/batch_tensors.hpp"
#include "autograd/autograd.hpp"
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
                                                             const std::function<void(size_t)>& on_batch) {
  NoGradGuard no_grad;
  models.eval();
  for (size_t i = 0; i < sources.size(); ++i)
    check_source_length(models, sources[i].size(), fmt::format("sentence {}", i));
  std::vector<std::vector<nn::Hypothesis>> results(sources.size());
  size_t done = 0;
  for (const data::Batch& batch : data::inference_batches(sources, inference_batching(options))) {
    const Tensor src = to_tensors(batch, models.device()).src_tokens;
    std::vector<std::vector<nn::Hypothesis>> hypotheses;
    if (options.search.beam == 1) {
      for (nn::Hypothesis& best : nn::greedy_search(models, src, options.search))
        hypotheses.push_back({std::move(best)});
    } else {
      hypotheses = nn::beam_search(models, src, options.search);
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

}  // namespace attn::app
