// `attnlab average --inputs CKPT... --output OUT` or `--inputs DIR --num-epoch-checkpoints N`
// (fairseq scripts/average_checkpoints.py; docs/models.md §1.11): the arithmetic mean of the
// model weights, written as checkpoint OUT (OUT.safetensors + OUT.json, the metadata of the
// first input, no optimizer state; the dictionaries and BPE codes it names are copied beside
// OUT) for `generate` / `translate`. The inputs need only their weights. OUT may not be a
// checkpoint that holds a training run's optimizer state, nor lie in the save dir of a training
// run that is running (apps/training/checkpoint.hpp, check_weights_only_output).
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "apps/training/checkpoint.hpp"
#include "apps/cli/command.hpp"
#include "nn/checkpoint_average.hpp"

namespace attn::app {
namespace {

struct AverageArgs {
  std::vector<std::string> inputs;
  std::string output;
  int num_epoch_checkpoints = 0, num_update_checkpoints = 0;
};

// The checkpoint bases to average, newest first when picked from a folder.
std::vector<std::string> chosen_checkpoints(const AverageArgs& args) {
  const int n = std::max(args.num_epoch_checkpoints, args.num_update_checkpoints);
  if (n == 0) {
    std::vector<std::string> bases;
    for (const std::string& input : args.inputs) bases.push_back(checkpoint_base(input));
    return bases;
  }
  if (args.inputs.size() != 1 || !std::filesystem::is_directory(args.inputs.front()))
    throw Error("average: --num-epoch-checkpoints / --num-update-checkpoints take one folder as --inputs");
  const auto numbering =
      args.num_epoch_checkpoints > 0 ? nn::CheckpointNumbering::Epoch : nn::CheckpointNumbering::Update;
  std::vector<std::string> bases;
  for (const std::string& path : nn::last_checkpoints(args.inputs.front(), n, numbering, ".safetensors"))
    bases.push_back(checkpoint_base(path));
  return bases;
}

int run_average(const AverageArgs& args) {
  if (args.num_epoch_checkpoints > 0 && args.num_update_checkpoints > 0)
    throw Error("average: pass --num-epoch-checkpoints or --num-update-checkpoints, not both");
  const std::vector<std::string> bases = chosen_checkpoints(args);
  average_checkpoints_into(bases, args.output);
  fmt::print("averaged {} checkpoints ({}) into {}\n", bases.size(), fmt::join(bases, ", "),
             weights_path(checkpoint_base(args.output)));
  return 0;
}

CommandAction setup_average(CLI::App& cmd) {
  auto args = std::make_shared<AverageArgs>();
  cmd.add_option("--inputs", args->inputs, "Checkpoints, or one folder with --num-*-checkpoints")->required();
  cmd.add_option("--output", args->output, "Output checkpoint name")->required();
  cmd.add_option("--num-epoch-checkpoints", args->num_epoch_checkpoints, "Average the last N checkpoint<E>")
      ->check(positive_number());
  cmd.add_option("--num-update-checkpoints", args->num_update_checkpoints, "Average the last N checkpoint_<E>_<U>")
      ->check(positive_number());
  return [args] { return run_average(*args); };
}

const CommandRegistration average_command("average", "Average the weights of checkpoints (average_checkpoints.py)",
                                          setup_average);

}  // namespace
}  // namespace attn::app
