// Loss and perplexity of a model on a binarized split, as fairseq's validation reports them
// (docs/models.md §1.6): the label-smoothed loss and the NLL summed over non-pad target
// tokens, divided by their count and by ln 2 (bits); ppl = 2^nll_loss.
#pragma once
#include <cstdint>
#include <optional>

#include "apps/task/translation_task.hpp"
#include "data/batching.hpp"
#include "dist/communicator.hpp"
#include "nn/criterion.hpp"

namespace attn::app {

struct ValidationResult {
  double loss = 0.0, nll_loss = 0.0, ppl = 0.0;  // per token, bits
  int64_t ntokens = 0, nsentences = 0;
  data::FilteredPairs skipped;  // pairs too long to score
  std::optional<double> bleu;   // with --eval-bleu (bleu_validation.hpp)
};

// How evaluation batches a split: as training forms batches, unshuffled, without prefetching;
// pairs longer than the model's positions or than max_tokens are filtered (and reported).
data::BatchingOptions evaluation_batching(const nn::EncoderDecoderModel& model, int64_t max_tokens,
                                          int64_t max_sentences = 0);

// In eval mode without gradients (the model is left in eval mode). Batches as training
// forms them, unshuffled; pairs longer than the model's positions or than max_tokens are
// skipped and reported in `skipped`. With `world` (data-parallel training, every rank calling
// it), each rank scores batches b with b mod size = rank and the loss, nll, token and
// sentence sums are all-reduced, as fairseq shards validation: every rank gets the numbers of
// the whole split for 1/size of the work, equal to one process's up to the order of the
// float64 sums.
ValidationResult evaluate_loss(nn::EncoderDecoderModel& model, const SplitCorpora& corpora,
                               const nn::LabelSmoothedCrossEntropy& criterion, int64_t max_tokens,
                               int64_t max_sentences = 0, dist::Communicator* world = nullptr);

}  // namespace attn::app
