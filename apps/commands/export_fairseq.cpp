// `attnlab export-fairseq CKPT --output DIR`: an attnlab checkpoint as a fairseq model
// archive (apps/interop/fairseq_export.hpp): DIR/model.pt with the dictionaries
// DIR/dict.SRC.txt, DIR/dict.TGT.txt and, when the model was trained on BPE, DIR/bpecodes
// beside it — the layout of fairseq's published models, the one `import-fairseq` reads. All
// files are written together or none (data::OutputFiles); a dictionary or codes file that DIR
// already holds as the checkpoint's own copy is left as it is.
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/cli/command.hpp"
#include "apps/interop/fairseq_export.hpp"
#include "apps/task/translation_task.hpp"
#include "apps/training/checkpoint.hpp"
#include "data/text_io.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {
namespace {
namespace fs = std::filesystem;

struct ExportArgs {
  std::string checkpoint;
  std::string output;
  bool with_optimizer_state = false;
};

// The optimizer's state from the checkpoint's optimizer file and metadata; refused where that
// file is missing or holds what fairseq's optimizer state cannot (the trained weights beside
// an exponential moving average, whose weights the export writes).
FairseqOptimizerSource optimizer_source(const std::string& checkpoint, const nlohmann::json& metadata) {
  ATTN_CHECK(metadata.value("ema", nlohmann::json()).is_null(),
             "export-fairseq --with-optimizer-state: {} holds the moving average of its weights (--ema-decay), not "
             "the weights its optimizer state belongs to",
             checkpoint);
  ATTN_CHECK(metadata.contains("optimizer_options"),
             "export-fairseq --with-optimizer-state: {} does not record its optimizer's settings (it was saved "
             "before they were recorded): train on from it with this attnlab and export the new checkpoint",
             checkpoint);
  const CheckpointContent content = load_checkpoint(checkpoint, /*with_optimizer=*/true);
  ATTN_CHECK(!content.optimizer.empty(),
             "export-fairseq --with-optimizer-state: {} has no optimizer file (saved with --no-save-optimizer-state)",
             checkpoint);
  FairseqOptimizerSource source;
  source.name = metadata.value("optimizer", std::string("adam"));
  source.options = metadata.at("optimizer_options");
  source.lr = metadata.value("lr", 0.0);
  for (const auto& [name, tensor] : content.optimizer) source.state.emplace(name, tensor);
  return source;
}

FairseqExportSource export_source(const TrainedModel& trained) {
  FairseqExportSource source;
  source.config = trained.model->config();
  source.weights = trained.model->state_dict();
  source.source_lang = trained.task.source_lang;
  source.target_lang = trained.task.target_lang;
  source.data_dir = trained.task.data_dir;
  source.num_updates = trained.metadata.value("num_updates", int64_t(0));
  source.epoch = trained.metadata.value("epoch", int64_t(1));
  if (const auto best = trained.metadata.find("best_loss"); best != trained.metadata.end() && best->is_number())
    source.best_loss = best->get<double>();
  source.criterion = trained.metadata.value("criterion", source.criterion);
  return source;
}

int run_export(const ExportArgs& args) {
  const TrainedModel trained = load_trained_model(args.checkpoint, Device::cpu());
  FairseqExportSource source = export_source(trained);
  if (args.with_optimizer_state) source.optimizer = optimizer_source(args.checkpoint, trained.metadata);
  const FairseqExport exported = fairseq_checkpoint_of(source);
  data::create_folders(args.output, "--output");
  const fs::path folder(args.output);
  data::OutputFiles outputs;
  outputs.add_written((folder / "model.pt").string(), [&](const std::string& temp) { exported.write(temp); });
  std::vector<std::string> beside;
  const TranslationTask& task = trained.task;
  for (const auto& [from, name] :
       {std::pair{task.source_dict_path, data::dictionary_file_name(task.source_lang)},
        std::pair{task.target_dict_path, data::dictionary_file_name(task.target_lang)},
        std::pair{task.bpe_codes, std::string(kBpeCodesFileName)}}) {
    if (from.empty()) continue;
    beside.push_back(name);
    const fs::path to = folder / name;
    std::error_code same_error;
    if (fs::exists(to) && fs::equivalent(from, to, same_error)) continue;  // the checkpoint's own copy
    outputs.add(to.string(), data::read_file_bytes(from));
  }
  outputs.commit();
  fmt::print("exported {} (fairseq --arch {}, {} parameters, {} -> {}) as {} with {}\n", args.checkpoint,
             exported.arch, trained.model->num_parameters(), task.source_lang, task.target_lang,
             (folder / "model.pt").string(), fmt::join(beside, ", "));
  for (const std::string& note : exported.notes) fmt::print("note: {}\n", note);
  return 0;
}

CommandAction setup_export(CLI::App& cmd) {
  auto args = std::make_shared<ExportArgs>();
  cmd.add_option("checkpoint", args->checkpoint, "attnlab checkpoint (any of its names)")->required();
  cmd.add_option("--output", args->output, "Folder for model.pt, the dictionaries and the BPE codes")->required();
  cmd.add_flag("--with-optimizer-state", args->with_optimizer_state,
               "Also write the optimizer's state (Adam's moments and step counts, or NAG's momentum) as fairseq's "
               "trainer saves its own, so fairseq-train --restore-file goes on without --reset-optimizer");
  return [args] { return run_export(*args); };
}

const CommandRegistration export_command("export-fairseq",
                                         "An attnlab checkpoint as a fairseq model archive (model.pt and dictionaries)",
                                         setup_export);

}  // namespace
}  // namespace attn::app
