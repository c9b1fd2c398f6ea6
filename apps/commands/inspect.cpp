// `attnlab inspect --path CKPT`: what a trained model's attention looks like (docs/design.md §4).
//   --source "..." [--target "..."] --out DIR   every head's map of one sentence pair as heat
//       maps and JSON (apps/inspection/map_figures.hpp): forced decoding of the given target,
//       or of the model's own beam-search translation when none is given;
//   --data DIR [--subset test] [--compare-to TEACHER] --out DIR   per-head statistics over a
//       binarized split (apps/inspection/attention_statistics.hpp) into DIR/statistics.json.
// Mixers without explicit weights show their implied maps (nn/mixers/token_mixer.hpp). A model
// whose maps hold NaN is refused (apps/inspection/attention_capture.hpp). DIR holds one run's
// output: the maps and JSON files an earlier run left there and this one did not rewrite
// (another model's heads) are removed once this run's files are written; other files stay.
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/cli/command.hpp"
#include "apps/cli/compute_options.hpp"
#include "apps/cli/search_options.hpp"
#include "apps/generation/translator.hpp"
#include "apps/inspection/attention_capture.hpp"
#include "apps/inspection/attention_statistics.hpp"
#include "apps/inspection/map_figures.hpp"
#include "apps/task/batch_tensors.hpp"
#include "apps/task/raw_text.hpp"
#include "apps/training/evaluation.hpp"
#include "core/error.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

struct InspectArgs {
  std::string path, out, source, target, bpe_codes;
  std::string data, subset = "test", compare_to;
  int64_t max_tokens = 2048;
  bool no_tokenize = false;
  DecodingOptions decoding;
  SamplingFlags sampling;
  ComputeOptions compute;
};

std::vector<int64_t> widened(const std::vector<int32_t>& ids) { return {ids.begin(), ids.end()}; }

constexpr const char* kStatisticsFile = "statistics.json";

// Returns the names of the files written into --out.
std::vector<std::string> inspect_sentence(const InspectArgs& args, TrainedModel& trained) {
  const TranslationTask& task = trained.task;
  const std::string codes = find_bpe_codes(task, args.path, args.bpe_codes, "inspect");
  const std::vector<int64_t> source =
      widened(RawTextEncoder(task.source_lang, codes, task.source_dict, !args.no_tokenize).encode(args.source, "--source", 1));
  check_source_length(*trained.model, source.size(), "--source");
  std::vector<int64_t> target;
  if (!args.target.empty()) {
    target = widened(
        RawTextEncoder(task.target_lang, codes, task.target_dict, !args.no_tokenize).encode(args.target, "--target", 1));
    ATTN_CHECK(int64_t(target.size()) <= trained.model->config().max_target_positions,
               "inspect: --target has {} tokens, more than the model's {} positions", target.size(),
               trained.model->config().max_target_positions);
  } else {
    target = translate_sentences(*trained.model, {source}, args.decoding).front().front().tokens;
  }
  const SentenceAttention attention = capture_attention(*trained.model, task, source, target);
  std::vector<std::string> written = write_sentence_attention(attention, trained.model->config(), args.out);
  fmt::print("source  {}\ntarget  {}{}\nwrote the maps of {} places into {}/ (PNG per layer and head, attention.json)\n",
             fmt::join(attention.source, " "), fmt::join(attention.decoder_output, " "),
             args.target.empty() ? "  (the model's translation)" : "", 3, args.out);
  return written;
}

BatchGeometry geometry_of(const data::Batch& batch) {
  return {batch.source_len, batch.target_len, batch.source_lengths, batch.target_lengths};
}

// Returns the name of the file written into --out.
std::string inspect_corpus(const InspectArgs& args, TrainedModel& trained) {
  const SplitCorpora corpora = open_split(open_task_for(trained, args.data), args.subset);
  std::optional<TrainedModel> teacher;
  if (!args.compare_to.empty()) {
    teacher.emplace(load_trained_model(args.compare_to, trained.model->device()));
    open_task_for(*teacher, args.data);  // the teacher must read the same ids: same dictionaries
  }
  data::BatchLoader loader(corpora.source, corpora.target,
                           evaluation_batching(*trained.model, args.max_tokens));
  AttentionStatistics statistics;
  while (std::optional<data::Batch> batch = loader.next()) {
    const BatchTensors t = to_tensors(*batch, trained.model->device());
    const nn::AttentionMaps maps = attention_of_batch(*trained.model, t.src_tokens, t.prev_output_tokens);
    std::optional<nn::AttentionMaps> teacher_maps;
    if (teacher) teacher_maps = attention_of_batch(*teacher->model, t.src_tokens, t.prev_output_tokens);
    statistics.add(maps, teacher_maps ? &*teacher_maps : nullptr, geometry_of(*batch));
  }
  ATTN_CHECK(statistics.sentences() > 0, "inspect: no sentence of {} '{}' fits the model's positions", args.data,
             args.subset);
  nlohmann::json j = statistics.to_json();
  j["checkpoint"] = args.path;
  j["subset"] = args.subset;
  if (teacher) j["teacher"] = args.compare_to;
  data::create_folders(args.out, "--out");
  const std::string file = (std::filesystem::path(args.out) / kStatisticsFile).string();
  data::write_file_atomic(file, j.dump(2) + "\n");
  fmt::print("{} sentences of {} '{}'{}\n{}wrote {}\n", statistics.sentences(), args.data, args.subset,
             teacher ? fmt::format(", compared with {}", args.compare_to) : "", statistics.table(), file);
  return kStatisticsFile;
}

// Removes the files an earlier run of inspect left in --out that this run did not rewrite: a
// model with fewer layers or heads would otherwise leave the old model's maps among its own.
// Only the names inspect writes are touched.
void remove_earlier_outputs(const std::string& out, const std::set<std::string>& written) {
  size_t removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    const bool ours = is_sentence_attention_file(name) || name == kStatisticsFile;
    if (ours && entry.is_regular_file() && !written.contains(name)) removed += std::filesystem::remove(entry.path());
  }
  if (removed > 0) fmt::print("removed {} files of an earlier inspect from {}/\n", removed, out);
}

int run_inspect(const InspectArgs& args) {
  if (args.source.empty() && args.data.empty())
    throw Error("inspect: give --source \"a sentence\" (maps of one sentence) or --data DIR (statistics of a split)");
  if (!args.compare_to.empty() && args.data.empty())
    throw Error("inspect: --compare-to compares statistics over a split: give --data DIR too");
  const Device device = apply_compute_options(args.compute);
  TrainedModel trained = load_trained_model(args.path, device);
  std::set<std::string> written;
  if (!args.source.empty())
    for (std::string& name : inspect_sentence(args, trained)) written.insert(std::move(name));
  if (!args.data.empty()) written.insert(inspect_corpus(args, trained));
  remove_earlier_outputs(args.out, written);
  return 0;
}

CommandAction setup_inspect(CLI::App& cmd) {
  auto args = std::make_shared<InspectArgs>();
  cmd.add_option("--path", args->path, "Checkpoint (NAME, NAME.safetensors or NAME.json)")->required();
  cmd.add_option("--out", args->out, "Folder for the maps / statistics")->required();
  cmd.add_option("--source", args->source, "A raw source sentence: its maps as PNG + JSON")
      ->check(not_empty("give a sentence, or leave --source out and give --data DIR for statistics of a split"));
  cmd.add_option("--target", args->target, "Its raw target (default: the model's beam-search translation)")
      ->check(not_empty("give the target sentence, or leave --target out to decode the model's own translation"));
  cmd.add_option("--bpe-codes", args->bpe_codes, "BPE codes (default: the ones the checkpoint recorded)");
  cmd.add_flag("--no-tokenize", args->no_tokenize, "--source/--target are tokenized already");
  cmd.add_option("--data", args->data, "Binarized data dir: statistics of a split")->check(CLI::ExistingDirectory);
  cmd.add_option("--subset", args->subset, "Split of --data (train, valid, test)");
  cmd.add_option("--compare-to", args->compare_to, "A teacher checkpoint: each head's distance to its map");
  cmd.add_option("--max-tokens", args->max_tokens, "Tokens per batch for --data")->check(positive_number());
  add_search_options(cmd, args->decoding.search, args->sampling);
  add_compute_options(cmd, args->compute);
  return [args] {
    apply_sampling_flags(args->sampling, args->decoding.search);
    return run_inspect(*args);
  };
}

const CommandRegistration inspect_command("inspect", "Attention maps (PNG + JSON) and per-head statistics", setup_inspect);

}  // namespace
}  // namespace attn::app
