// Validation loss / perplexity. See evaluation.hpp.
#include "apps/training/evaluation.hpp"

#include <cmath>
#include <numbers>

#include "apps/task/batch_tensors.hpp"
#include "autograd/autograd.hpp"
#include "data/batching.hpp"

namespace attn::app {

ValidationResult evaluate_loss(nn::EncoderDecoderModel& model, const SplitCorpora& corpora,
                               const nn::LabelSmoothedCrossEntropy& criterion, int64_t max_tokens,
                               int64_t max_sentences) {
  data::BatchingOptions batching;
  batching.max_tokens = max_tokens;
  batching.max_sentences = max_sentences;
  batching.max_source_positions = model.config().max_source_positions;
  batching.max_target_positions = model.config().max_target_positions;
  batching.oversize = data::OversizePolicy::kFilter;
  batching.shuffle = false;
  batching.prefetch = 0;
  data::BatchLoader loader(corpora.source, corpora.target, batching);
  NoGradGuard no_grad;
  model.eval();
  double loss_sum = 0.0, nll_sum = 0.0;
  ValidationResult result;
  while (std::optional<data::Batch> batch = loader.next()) {
    const BatchTensors tensors = to_tensors(*batch);
    const nn::CriterionOutput out = criterion(model.forward(tensors.src_tokens, tensors.prev_output_tokens), tensors.target);
    loss_sum += out.loss.item();
    nll_sum += out.nll_sum;
    result.ntokens += out.ntokens;
    result.nsentences += batch->batch_size;
  }
  const std::string split = corpora.target.path();
  if (loader.num_filtered() > 0) result.skipped = loader.filtered().describe(max_tokens);
  if (result.ntokens == 0)
    throw Error(result.skipped.empty()
                    ? fmt::format("{}: nothing to score: the split is empty", split)
                    : fmt::format("{}: nothing to score: every pair was skipped, {}", split, result.skipped));
  result.loss = loss_sum / double(result.ntokens) / std::numbers::ln2;
  result.nll_loss = nll_sum / double(result.ntokens) / std::numbers::ln2;
  result.ppl = std::exp2(result.nll_loss);
  ATTN_CHECK(std::isfinite(result.loss) && std::isfinite(result.nll_loss),
             "{}: the loss is {}: the model's output is not finite (its weights hold NaN/inf, or its activations "
             "overflow)",
             split, result.loss);
  return result;
}

}  // namespace attn::app
