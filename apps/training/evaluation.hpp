// Loss and perplexity of a model on a binarized split, as fairseq's validation reports them
// (docs/models.md §1.6): the label-smoothed loss and the NLL summed over non-pad target
// tokens, divided by their count and by ln 2 (bits); ppl = 2^nll_loss.
#pragma once
#include <cstdint>

#include "apps/task/translation_task.hpp"
#include "data/batching.hpp"
#include "nn/criterion.hpp"

namespace attn::app {

struct ValidationResult {
  double loss = 0.0, nll_loss = 0.0, ppl = 0.0;  // per token, bits
  int64_t ntokens = 0, nsentences = 0;
  data::FilteredPairs skipped;  // pairs too long to score
};

// How evaluation batches a split: as training forms batches, unshuffled, without prefetching;
// pairs longer than the model's positions or than max_tokens are filtered (and reported).
data::BatchingOptions evaluation_batching(const nn::EncoderDecoderModel& model, int64_t max_tokens,
                                          int64_t max_sentences = 0);

// In eval mode without gradients (the model is left in eval mode). Batches as training
// forms them, unshuffled; pairs longer than the model's positions or than max_tokens are
// skipped and reported in `skipped`.
ValidationResult evaluate_loss(nn::EncoderDecoderModel& model, const SplitCorpora& corpora,
                               const nn::LabelSmoothedCrossEntropy& criterion, int64_t max_tokens,
                               int64_t max_sentences = 0);

}  // namespace attn::app
