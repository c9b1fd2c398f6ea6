// `attnlab convert --from CKPT --output OUT [--to-arch ARCH] [--model-override k=v ...]`:
// the swap of T2R's swap-then-finetune (apps/training/checkpoint_conversion.hpp), printing
// what was copied, what is new and what was dropped. Finetune OUT with `train
// --finetune-from-model OUT`, or decode with it directly. As for `average`, OUT may not be a
// checkpoint that holds a training run's optimizer state, nor lie in a running run's save dir.
#include <memory>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "apps/cli/command.hpp"
#include "apps/training/checkpoint.hpp"
#include "apps/training/checkpoint_conversion.hpp"

namespace attn::app {
namespace {

void print_names(const char* what, const std::vector<std::string>& names) {
  fmt::print("{} {} tensors{}\n", what, names.size(), names.empty() ? "" : ":");
  for (const std::string& name : names) fmt::print("  {}\n", name);
}

int run_convert(const ConversionRequest& request) {
  const ConversionResult r = convert_checkpoint(request);
  fmt::print("converted {} ({}) into {} ({}): {} of {} parameters carried over\n",
             weights_path(checkpoint_base(request.from)), r.source.arch, weights_path(checkpoint_base(request.output)),
             r.target.arch, r.transfer.copied_parameters, r.parameters);
  print_names("copied", r.transfer.copied);
  print_names("new", r.transfer.added);
  print_names("dropped", r.transfer.dropped);
  return 0;
}

CommandAction setup_convert(CLI::App& cmd) {
  auto args = std::make_shared<ConversionRequest>();
  cmd.add_option("--from", args->from, "Trained checkpoint to convert (NAME, NAME.safetensors or NAME.json)")
      ->required();
  cmd.add_option("--output", args->output, "Checkpoint to write")->required();
  cmd.add_option("--to-arch", args->to_arch, "Preset of the new model (default: the source's configuration)");
  cmd.add_option("--model-override", args->model_overrides,
                 "Any config field of the new model, key=value (repeatable), e.g. decoder_self_mixer=kernel:t2r+additive");
  cmd.add_option("--seed", args->seed, "Seed of the new parameters' initialisation")->capture_default_str();
  return [args] { return run_convert(*args); };
}

const CommandRegistration convert_command("convert", "Swap a trained model's mixers, keeping every weight that carries over",
                                          setup_convert);

}  // namespace
}  // namespace attn::app
