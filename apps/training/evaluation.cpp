// Validation loss / perplexity. See evaluation.hpp.
#include "apps/training/evaluation.hpp"

#include <cmath>
#include <numbers>
#include <vector>

#include "apps/task/batch_tensors.hpp"
#include "autograd/autograd.hpp"
#include "data/batching.hpp"

namespace attn::app {

data::BatchingOptions evaluation_batching(const nn::EncoderDecoderModel& model, int64_t max_tokens,
                                          int64_t max_sentences) {
  data::BatchingOptions batching;
  batching.max_tokens = max_tokens;
  batching.max_sentences = max_sentences;
  batching.max_source_positions = model.config().max_source_positions;
  batching.max_target_positions = model.config().max_target_positions;
  batching.oversize = data::OversizePolicy::kFilter;
  batching.shuffle = false;
  batching.prefetch = 0;
  return batching;
}

ValidationResult evaluate_loss(nn::EncoderDecoderModel& model, const SplitCorpora& corpora,
                               const nn::LabelSmoothedCrossEntropy& criterion, int64_t max_tokens,
                               int64_t max_sentences, dist::Communicator* world) {
  data::BatchLoader loader(corpora.source, corpora.target, evaluation_batching(model, max_tokens, max_sentences));
  const int rank = world ? world->rank() : 0, ranks = world ? world->size() : 1;
  NoGradGuard no_grad;
  model.eval();
  std::vector<double> sums(4, 0.0);  // loss, nll, target tokens, sentences
  for (int64_t index = 0; std::optional<data::Batch> batch = loader.next(); ++index) {
    if (index % ranks != rank) continue;
    const BatchTensors tensors = to_tensors(*batch, model.device());
    const nn::CriterionOutput out = criterion(model.forward(tensors.src_tokens, tensors.prev_output_tokens), tensors.target);
    sums[0] += out.loss.item();
    sums[1] += out.nll_sum;
    sums[2] += double(out.ntokens);
    sums[3] += double(batch->batch_size);
  }
  if (ranks > 1) world->all_reduce_sum(sums.data(), sums.size());
  ValidationResult result;
  result.skipped = loader.filtered();
  result.ntokens = int64_t(sums[2]);
  result.nsentences = int64_t(sums[3]);
  if (result.ntokens > 0) {
    result.loss = sums[0] / sums[2] / std::numbers::ln2;
    result.nll_loss = sums[1] / sums[2] / std::numbers::ln2;
  }
  result.ppl = std::exp2(result.nll_loss);
  return result;
}

}  // namespace attn::app
