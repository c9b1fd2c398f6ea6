// Batched decoding in input order. See translator.hpp.
#include "apps/generation/translator.hpp"

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

}  // namespace

std::vector<std::vector<nn::Hypothesis>> translate_sentences(nn::EncoderDecoderModel& model,
                                                             const std::vector<std::vector<int64_t>>& sources,
                                                             const DecodingOptions& options,
                                                             const std::function<void(size_t)>& on_batch) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<std::vector<nn::Hypothesis>> results(sources.size());
  size_t done = 0;
  for (const data::Batch& batch : data::inference_batches(sources, inference_batching(options))) {
    const Tensor src = to_tensors(batch).src_tokens;
    std::vector<std::vector<nn::Hypothesis>> hypotheses;
    if (options.search.beam == 1) {
      for (nn::Hypothesis& best : nn::greedy_search(model, src, options.search)) hypotheses.push_back({std::move(best)});
    } else {
      hypotheses = nn::beam_search(model, src, options.search);
    }
    for (size_t r = 0; r < batch.ids.size(); ++r) results[size_t(batch.ids[r])] = std::move(hypotheses[r]);
    done += batch.ids.size();
    if (on_batch) on_batch(done);
  }
  return results;
}

}  // namespace attn::app
