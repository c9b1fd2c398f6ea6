// `attnlab validate DATA_DIR --path CKPT --subset valid|test|valid,test`: loss and perplexity
// of a checkpoint on each split (fairseq-validate; docs/models.md §1.6, in bits).
#include <cmath>
#include <memory>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/cli/compute_options.hpp"
#include "apps/training/evaluation.hpp"

namespace attn::app {
namespace {

struct ValidateArgs {
  std::string data_dir, path, subset = "valid";
  int64_t max_tokens = 4096, max_sentences = 0;
  ComputeOptions compute;
};

int run_validate(const ValidateArgs& args) {
  const std::vector<std::string> subsets = parse_split_list(args.subset, "--subset");
  const Device device = apply_compute_options(args.compute);
  TrainedModel trained = load_trained_model(args.path, device);
  const TranslationTask task = open_task_for(trained, args.data_dir);
  const nn::LabelSmoothedCrossEntropy criterion(trained.metadata.value("label_smoothing", 0.0), data::Dictionary::kPad);
  std::vector<std::pair<std::string, SplitCorpora>> splits;  // all opened first: a missing one stops before any result
  for (const std::string& subset : subsets) splits.emplace_back(subset, open_split(task, subset));
  for (const auto& [subset, corpora] : splits) {
    const ValidationResult r = evaluate_loss(*trained.model, corpora, criterion, args.max_tokens, args.max_sentences);
    // Checked before anything is printed: a loss of nothing, or of NaN, is no result.
    ATTN_CHECK(r.nsentences > 0, "validate: no sentence of '{}' in {} was scored ({})", subset, args.data_dir,
               r.skipped.total() > 0 ? r.skipped.describe() : "the split is empty");
    ATTN_CHECK(std::isfinite(r.loss) && std::isfinite(r.nll_loss),
               "validate: the loss of {} on '{}' is not a number: the model produced NaN (or infinite) outputs",
               args.path, subset);
    fmt::print("valid on '{}' subset | loss {:.3f} | nll_loss {:.3f} | ppl {:.2f} | {} sentences, {} target tokens\n",
               subset, r.loss, r.nll_loss, r.ppl, r.nsentences, r.ntokens);
    if (r.skipped.total() > 0) fmt::print("valid on '{}' subset | {}\n", subset, r.skipped.describe());
  }
  return 0;
}

CommandAction setup_validate(CLI::App& cmd) {
  auto args = std::make_shared<ValidateArgs>();
  add_data_dir_argument(cmd, args->data_dir, "Preprocessed data dir");
  cmd.add_option("--path", args->path, "Checkpoint (NAME, NAME.safetensors or NAME.json)")->required();
  cmd.add_option("--subset,--valid-subset", args->subset, "Split to evaluate, or several: valid,test")
      ->capture_default_str();
  cmd.add_option("--max-tokens", args->max_tokens, "Tokens per batch")->check(positive_number())->capture_default_str();
  cmd.add_option("--max-sentences,--batch-size", args->max_sentences, "Sentences per batch")->check(positive_number());
  add_compute_options(cmd, args->compute);
  return [args] { return run_validate(*args); };
}

const CommandRegistration validate_command("validate", "Loss and perplexity of a checkpoint on a split", setup_validate);

}  // namespace
}  // namespace attn::app
