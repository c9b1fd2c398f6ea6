// `attnlab import-fairseq MODEL.pt --output OUT`: a fairseq Transformer or LightConv/DynamicConv
// checkpoint (what fairseq-train saves, or a published model's model.pt) as an attnlab
// checkpoint OUT, weights only, for `generate`, `translate`, `validate`, `inspect` and `average`
// (apps/interop/fairseq_checkpoint.hpp); with --with-optimizer-state also the optimizer state
// fairseq-train saved, for `train --restore-file OUT` (apps/interop/fairseq_optimizer_state.hpp).
// The dictionaries are fairseq's dict.SRC.txt and dict.TGT.txt beside MODEL.pt (the layout of
// fairseq's model archives) unless given, the languages those the checkpoint records unless
// given, and a `bpecodes` file beside MODEL.pt
// is recorded for `translate` (--bpe-codes names another). The dictionaries must have the rows
// of the embeddings; they and the BPE codes are copied beside OUT, as training does.
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/cli/command.hpp"
#include "apps/interop/fairseq_checkpoint.hpp"
#include "apps/interop/fairseq_export.hpp"
#include "apps/interop/fairseq_optimizer_state.hpp"
#include "apps/interop/torch_file.hpp"
#include "apps/task/translation_task.hpp"
#include "apps/training/checkpoint.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {
namespace {
namespace fs = std::filesystem;

struct ImportArgs {
  std::string model;
  std::string output;
  std::string source_lang, target_lang;
  std::string source_dict, target_dict;
  std::string bpe_codes;
  bool with_optimizer_state = false;
};

// The task the imported model translates: its languages, dictionaries (checked against the
// embeddings' rows) and BPE codes.
TranslationTask imported_task(const ImportArgs& args, const FairseqModel& imported) {
  TranslationTask task;
  const fs::path beside = fs::absolute(args.model).parent_path();
  task.data_dir = beside.string();
  task.source_lang = args.source_lang.empty() ? imported.source_lang : args.source_lang;
  task.target_lang = args.target_lang.empty() ? imported.target_lang : args.target_lang;
  ATTN_CHECK(!task.source_lang.empty() && !task.target_lang.empty(),
             "import-fairseq: {} records no languages; pass --source-lang and --target-lang", args.model);
  auto dictionary = [&](const std::string& given, const std::string& lang, int64_t rows, const char* side) {
    const std::string path = given.empty() ? (beside / data::dictionary_file_name(lang)).string() : given;
    data::Dictionary loaded = data::Dictionary::load(path);
    ATTN_CHECK(int64_t(loaded.size()) == rows,
               "import-fairseq: {} has {} entries with the 4 special ones, but the model's {} embedding has {} rows: "
               "not the dictionary it was trained with",
               path, loaded.size(), side, rows);
    return std::pair{path, std::move(loaded)};
  };
  std::tie(task.source_dict_path, task.source_dict) =
      dictionary(args.source_dict, task.source_lang, imported.config.src_vocab_size, "source");
  std::tie(task.target_dict_path, task.target_dict) =
      dictionary(args.target_dict, task.target_lang, imported.config.tgt_vocab_size, "target");
  const fs::path codes = args.bpe_codes.empty() ? beside / kBpeCodesFileName : fs::path(args.bpe_codes);
  if (!args.bpe_codes.empty() || fs::exists(codes)) task.bpe_codes = fs::absolute(codes).lexically_normal().string();
  return task;
}

// The optimizer state fairseq's trainer saved in `file` (read from `path`), for `model`.
ImportedOptimizerState optimizer_state(const TorchFile& file, const std::string& path,
                                       const nn::EncoderDecoderModel& model) {
  return imported_optimizer_state(file, path, fairseq_parameters(fairseq_tensors(model.config(), model.state_dict())),
                                  model.named_parameters());
}

// The state as the checkpoint's optimizer file, with the metadata `train --restore-file` reads
// with it (the update count, the optimizer and its settings, the criterion); the schedule, data
// position and meters are not fairseq's to give.
void add_optimizer_state(const ImportedOptimizerState& state, CheckpointContent& content) {
  content.optimizer = state.state;
  content.metadata["optimizer"] = state.name;
  content.metadata["optimizer_options"] = state.options;
  content.metadata["num_updates"] = state.num_updates;
  content.metadata["optimizer_state_saved"] = true;
  if (!state.criterion.empty()) content.metadata["criterion"] = state.criterion;
}

int run_import(const ImportArgs& args) {
  check_weights_only_output(args.output, "import-fairseq", {args.model});
  const TorchFile file = TorchFile::read(args.model);  // read once: the weights and the optimizer state
  const FairseqModel imported = read_fairseq_checkpoint(file, args.model);
  const TranslationTask task = imported_task(args, imported);
  nn::EncoderDecoderModel model(imported.config);
  try {
    model.load_state_dict(imported.weights);
  } catch (const Error& e) {
    throw Error(fmt::format("import-fairseq: the weights of {} do not fit fairseq's --arch {} as attnlab builds it: {}",
                            args.model, imported.arch, e.what()));
  }
  std::optional<ImportedOptimizerState> optimizer;  // read before anything is written
  if (args.with_optimizer_state) optimizer = optimizer_state(file, args.model, model);
  const std::string base = checkpoint_base(args.output);
  const std::string folder = fs::path(base).parent_path().string();
  data::create_folders(folder, "--output's folder");
  CheckpointContent content{model.state_dict(), {}, {}};
  content.metadata = {{"model_config", nn::to_json(imported.config)},
                      {"task", keep_task_beside(task, folder.empty() ? "." : folder)},
                      {"arch", imported.arch},
                      {"imported_from",
                       {{"path", fs::absolute(args.model).lexically_normal().string()},
                        {"checksum", file_checksum(args.model)},
                        {"left_out", imported.left_out}}}};
  if (optimizer) add_optimizer_state(*optimizer, content);
  save_checkpoint(base, content);
  fmt::print("imported {} (fairseq --arch {}, {} parameters, {} -> {}) into {}\n", args.model, imported.arch,
             model.num_parameters(), task.source_lang, task.target_lang, weights_path(base));
  if (!imported.left_out.empty()) fmt::print("left out (no weights): {}\n", fmt::join(imported.left_out, ", "));
  return 0;
}

CommandAction setup_import(CLI::App& cmd) {
  auto args = std::make_shared<ImportArgs>();
  cmd.add_option("model", args->model, "fairseq checkpoint (model.pt, checkpoint_best.pt)")->required();
  cmd.add_option("--output", args->output, "Output checkpoint name")->required();
  cmd.add_option("-s,--source-lang", args->source_lang, "Source language (default: as the checkpoint records)");
  cmd.add_option("-t,--target-lang", args->target_lang, "Target language (default: as the checkpoint records)");
  cmd.add_option("--source-dict", args->source_dict, "Source dictionary (default: dict.SRC.txt beside the model)");
  cmd.add_option("--target-dict", args->target_dict, "Target dictionary (default: dict.TGT.txt beside the model)");
  cmd.add_option("--bpe-codes", args->bpe_codes, "BPE codes for `translate` (default: bpecodes beside the model)");
  cmd.add_flag("--with-optimizer-state", args->with_optimizer_state,
               "Also import the optimizer's state fairseq-train saved (Adam's moments and step counts, or NAG's "
               "momentum), for train --restore-file OUT --reset-lr-scheduler --reset-dataloader --reset-meters");
  return [args] { return run_import(*args); };
}

const CommandRegistration import_command(
    "import-fairseq", "A fairseq Transformer or LightConv/DynamicConv checkpoint (model.pt) as an attnlab checkpoint",
    setup_import);

}  // namespace
}  // namespace attn::app
