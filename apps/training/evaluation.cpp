// Validation loss / perplexity. See evaluation.hpp.
#include "apps/training/evaluation.hpp"

#include <cmath>
#include <numbers>

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
                               int64_t max_sentences) {
  data::BatchLoader loader(corpora.source, corpora.target, evaluation_batching(model, max_tokens, max_sentences));
  NoGradGuard no_grad;
  model.eval();
  double loss_sum = 0.0, nll_sum = 0.0;
  ValidationResult result;
  result.skipped = loader.filtered();
  while (std::optional<data::Batch> batch = loader.next()) {
    const BatchTensors tensors = to_tensors(*batch, model.device());
    const nn::CriterionOutput out = criterion(model.forward(tensors.src_tokens, tensors.prev_output_tokens), tensors.target);
    loss_sum += out.loss.item();
    nll_sum += out.nll_sum;
    result.ntokens += out.ntokens;
    result.nsentences += batch->batch_size;
  }
  if (result.ntokens > 0) {
    result.loss = loss_sum / double(result.ntokens) / std::numbers::ln2;
    result.nll_loss = nll_sum / double(result.ntokens) / std::numbers::ln2;
  }
  result.ppl = std::exp2(result.nll_loss);
  return result;
}

}  // namespace attn::app
