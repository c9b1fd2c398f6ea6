// `attnlab convert --from CKPT --output OUT [--to-arch ARCH] [--model-override k=v ...]`:
// the swap of T2R's swap-then-finetune (Kasai et al. 2021 §2.2; docs/models.md §5.4). Builds
// the new model — preset ARCH (or the source's configuration) with the source's vocabulary
// and any overrides, e.g. `decoder_self_mixer=kernel:t2r+additive` — copies every weight the
// two share by name and shape (q/k/v/out projections, FFNs, embeddings, norms), initialises
// what is new (feature maps, gates) from --seed, and prints what was copied, what is new and
// what was dropped. OUT is a weights-only checkpoint (no optimizer state, no training
// progress) with the source's dictionaries beside it: finetune it with `train
// --finetune-from-model OUT`, or decode with it directly.
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/cli/command.hpp"
#include "apps/task/translation_task.hpp"
#include "apps/training/checkpoint.hpp"
#include "core/rng.hpp"
#include "nn/weight_transfer.hpp"

namespace attn::app {
namespace {

struct ConvertArgs {
  std::string from, output, to_arch;
  std::vector<std::string> model_overrides;
  uint64_t seed = 1;
};

// The new model's configuration: the preset with the source's vocabulary, or the source's own.
nn::TransformerConfig target_config(const nn::TransformerConfig& source, const ConvertArgs& args) {
  nn::TransformerConfig target = source;
  if (!args.to_arch.empty()) {
    target = nn::transformer_preset(args.to_arch);
    target.src_vocab_size = source.src_vocab_size;
    target.tgt_vocab_size = source.tgt_vocab_size;
    target.padding_idx = source.padding_idx;
    target.eos_idx = source.eos_idx;
    target.share_all_embeddings = source.share_all_embeddings;
    target.share_decoder_input_output_embed = source.share_decoder_input_output_embed;
  }
  nn::apply_overrides(target, args.model_overrides);
  target.validate();
  for (auto [name, from, to] : {std::tuple{"encoder_attention_heads", source.encoder_attention_heads,
                                           target.encoder_attention_heads},
                                std::tuple{"decoder_attention_heads", source.decoder_attention_heads,
                                           target.decoder_attention_heads}})
    ATTN_CHECK(from == to,
               "convert: {} is {} in {} but {} in the new model; the projections' heads would be split differently",
               name, from, args.from, to);
  return target;
}

void print_names(const char* what, const std::vector<std::string>& names) {
  fmt::print("{} {} tensors{}\n", what, names.size(), names.empty() ? "" : ":");
  for (const std::string& name : names) fmt::print("  {}\n", name);
}

int run_convert(const ConvertArgs& args) {
  const std::string base = checkpoint_base(args.from), output = checkpoint_base(args.output);
  const CheckpointContent source = load_checkpoint(base, /*with_optimizer=*/false);
  nn::TransformerConfig source_config;
  TranslationTask task;
  try {
    source_config = nn::config_from_json(source.metadata.at("model_config"));
    task = task_from_json(source.metadata.at("task"), base);
  } catch (const std::exception& e) {
    throw CheckpointError(fmt::format("checkpoint {}: {}", metadata_path(base), e.what()));
  }
  const nn::TransformerConfig config = target_config(source_config, args);
  manual_seed(args.seed);
  nn::EncoderDecoderModel model(config);
  const nn::WeightTransfer report =
      nn::transfer_weights(std::map<std::string, Tensor>(source.model.begin(), source.model.end()), model);
  const nlohmann::json metadata = {
      {"model_config", nn::to_json(config)},
      {"task", keep_task_beside(task, std::filesystem::path(output).parent_path().string())},
      {"converted_from", {{"checkpoint", weights_path(base)}, {"checksum", file_checksum(weights_path(base))}}},
      {"conversion", {{"copied", report.copied}, {"added", report.added}, {"dropped", report.dropped}}}};
  save_checkpoint(output, {model.state_dict(), {}, metadata});
  fmt::print("converted {} ({}) into {} ({}): {} of {} parameters carried over\n", weights_path(base),
             source_config.arch, weights_path(output), config.arch, report.copied_values, model.num_parameters());
  print_names("copied", report.copied);
  print_names("new", report.added);
  print_names("dropped", report.dropped);
  return 0;
}

CommandAction setup(CLI::App& cmd) {
  auto args = std::make_shared<ConvertArgs>();
  cmd.add_option("--from", args->from, "Trained checkpoint to convert (NAME, NAME.safetensors or NAME.json)")
      ->required();
  cmd.add_option("--output", args->output, "Checkpoint to write")->required();
  cmd.add_option("--to-arch", args->to_arch, "Preset of the new model (default: the source's configuration)");
  cmd.add_option("--model-override", args->model_overrides,
                 "Any config field of the new model, key=value (repeatable), e.g. decoder_self_mixer=kernel:t2r+additive");
  cmd.add_option("--seed", args->seed, "Seed of the new parameters' initialisation")->capture_default_str();
  return [args] { return run_convert(*args); };
}

const CommandRegistration registration("convert", "Swap a trained model's mixers, keeping every weight that carries over",
                                       setup);

}  // namespace
}  // namespace attn::app
