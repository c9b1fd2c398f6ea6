// `attnlab inspect --path CKPT`: what a trained model's attention looks like (docs/design.md §4).
//   --source "..." [--target "..."] --out DIR   every head's map of one sentence pair as heat
//       maps and JSON (apps/inspection/map_figures.hpp): forced decoding of the given target,
//       or of the model's own beam-search translation when none is given;
//   --data DIR [--subset test] [--compare-to TEACHER] --out DIR   per-head statistics over a
//       binarized split (apps/inspection/attention_statistics.hpp) into DIR/statistics.json.
// Mixers without explicit weights show their implied maps (nn/mixers/token_mixer.hpp). A model
// whose maps hold NaN is refused (apps/inspection/attention_capture.hpp). DIR holds one run's
// output: its files are written together once all are computed, all or none, and then the maps
// and JSON files an earlier run left there and this one did not rewrite (another model's heads)
// are removed; other files stay.
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
#include "apps/training/checkpoint.hpp"
#include "apps/training/evaluation.hpp"
#include "core/error.hpp"
#include "data/dictionary.hpp"
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

// What one mode of inspect found: the files it puts into --out, and what it says about them
// once they are there.
struct Findings {
  std::vector<NamedFile> files;
  std::string summary;
};

// The ids of --source or --target (`flag`). Text the tokenizer leaves nothing of (control
// characters) would be a sentence of </s> alone, as white space would (refused at parse time).
std::vector<int64_t> encode_sentence(const std::string& text, const std::string& flag, const RawTextEncoder& encoder) {
  std::vector<int64_t> ids = widened(encoder.encode(text, flag, 1));
  ATTN_CHECK(ids.size() > 1, "inspect: {} has no word once tokenized (only white space or control characters)", flag);
  return ids;
}

Findings inspect_sentence(const InspectArgs& args, TrainedModel& trained) {
  const TranslationTask& task = trained.task;
  const std::string codes = find_bpe_codes(task, args.path, args.bpe_codes, "inspect");
  const std::vector<int64_t> source = encode_sentence(
      args.source, "--source", RawTextEncoder(task.source_lang, codes, task.source_dict, !args.no_tokenize));
  check_source_length(*trained.model, source.size(), "--source");
  std::vector<int64_t> target;
  if (!args.target.empty()) {
    target = encode_sentence(args.target, "--target",
                             RawTextEncoder(task.target_lang, codes, task.target_dict, !args.no_tokenize));
    ATTN_CHECK(int64_t(target.size()) <= trained.model->config().max_target_positions,
               "inspect: --target has {} tokens, more than the model's {} positions", target.size(),
               trained.model->config().max_target_positions);
  } else {
    target = translate_sentences(*trained.model, {source}, args.decoding).front().front().tokens;
  }
  const SentenceAttention attention = capture_attention(*trained.model, task, source, target);
  return {sentence_attention_files(attention, trained.model->config()),
          fmt::format("source  {}\ntarget  {}{}\nwrote the maps of {} places into {}/ (PNG per layer and head, "
                      "attention.json)\n",
                      fmt::join(attention.source, " "), fmt::join(attention.decoder_output, " "),
                      args.target.empty() ? "  (the model's translation)" : "", 3, args.out)};
}

BatchGeometry geometry_of(const data::Batch& batch) {
  return {batch.source_len, batch.target_len, batch.source_lengths, batch.target_lengths};
}

// The teacher reads the model's batches, so it must translate the same languages with the same
// dictionaries, byte for byte (the model's were checked against --data's already).
void check_teacher_reads_same_ids(const InspectArgs& args, const TranslationTask& model,
                                  const TranslationTask& teacher) {
  if (teacher.source_lang != model.source_lang || teacher.target_lang != model.target_lang)
    throw Error(fmt::format("inspect: the teacher (--compare-to {}) translates {}-{}, the model (--path {}) {}-{}",
                            args.compare_to, teacher.source_lang, teacher.target_lang, args.path, model.source_lang,
                            model.target_lang));
  for (const auto& [teachers, models] : {std::pair{teacher.source_dict_path, model.source_dict_path},
                                          std::pair{teacher.target_dict_path, model.target_dict_path}})
    if (file_checksum(teachers) != file_checksum(models))
      throw Error(fmt::format("inspect: the teacher (--compare-to {}) has the dictionary {}, which differs from the "
                              "model's {} (--path {}): the teacher must read the same token ids",
                              args.compare_to, teachers, models, args.path));
}

// Why sentences of the split were left out, naming what sets each limit: "903 skipped: 903 with
// more than --max-tokens 8 tokens on a side".
std::string skipped_in_words(const data::FilteredPairs& skipped) {
  std::vector<std::string> reasons;
  if (skipped.by_max_tokens > 0)
    reasons.push_back(
        fmt::format("{} with more than --max-tokens {} tokens on a side", skipped.by_max_tokens, skipped.max_tokens));
  if (skipped.by_positions > 0)
    reasons.push_back(fmt::format("{} longer than the model's positions ({} source, {} target)", skipped.by_positions,
                                  skipped.max_source_positions, skipped.max_target_positions));
  return fmt::format("{} skipped: {}", skipped.total(), fmt::join(reasons, ", "));
}

nlohmann::json skipped_json(const data::FilteredPairs& skipped) {
  return {{"sentences", skipped.total()},
          {"over_max_tokens", skipped.by_max_tokens},
          {"max_tokens", skipped.max_tokens},
          {"over_positions", skipped.by_positions},
          {"first_ids", skipped.first_ids}};
}

Findings inspect_corpus(const InspectArgs& args, TrainedModel& trained) {
  const SplitCorpora corpora = open_split(open_task_for(trained, args.data), args.subset);
  std::optional<TrainedModel> teacher;
  if (!args.compare_to.empty()) {
    teacher.emplace(load_trained_model(args.compare_to, trained.model->device()));
    check_teacher_reads_same_ids(args, trained.task, teacher->task);
  }
  data::BatchLoader loader(corpora.source, corpora.target,
                           evaluation_batching(*trained.model, args.max_tokens));
  const data::FilteredPairs& skipped = loader.filtered();
  AttentionStatistics statistics;
  while (std::optional<data::Batch> batch = loader.next()) {
    const BatchTensors t = to_tensors(*batch, trained.model->device());
    const nn::AttentionMaps maps = attention_of_batch(*trained.model, t.src_tokens, t.prev_output_tokens);
    std::optional<nn::AttentionMaps> teacher_maps;
    if (teacher) teacher_maps = attention_of_batch(*teacher->model, t.src_tokens, t.prev_output_tokens);
    statistics.add(maps, teacher_maps ? &*teacher_maps : nullptr, geometry_of(*batch));
  }
  ATTN_CHECK(statistics.sentences() > 0, "inspect: no sentence of {} '{}' to inspect ({})", args.data, args.subset,
             skipped.total() > 0 ? skipped_in_words(skipped) : "the split is empty");
  nlohmann::json j = statistics.to_json();
  j["checkpoint"] = args.path;
  j["subset"] = args.subset;
  j["skipped"] = skipped_json(skipped);
  if (teacher) j["teacher"] = args.compare_to;
  const int64_t inspected = statistics.sentences();
  const std::string counted = skipped.total() == 0
                                  ? fmt::format("{} sentences", inspected)
                                  : fmt::format("{} of {} sentences", inspected, inspected + int64_t(skipped.total()));
  return {{{kStatisticsFile, j.dump(2) + "\n"}},
          fmt::format("{} of {} '{}'{}{}\n{}wrote {}\n", counted, args.data, args.subset,
                      teacher ? fmt::format(", compared with {}", args.compare_to) : "",
                      skipped.total() > 0 ? fmt::format(" ({})", skipped_in_words(skipped)) : "", statistics.table(),
                      (std::filesystem::path(args.out) / kStatisticsFile).string())};
}

// Puts every file of the run into --out together (data::OutputFiles): a folder in a file's place
// or a full disk leaves the earlier run's files as they were, never some of each. Returns
// their names.
std::set<std::string> write_together(const std::string& out, const std::vector<Findings>& findings) {
  data::create_folders(out, "--out");
  data::OutputFiles outputs;
  std::set<std::string> names;
  for (const Findings& found : findings)
    for (const NamedFile& file : found.files) {
      outputs.add((std::filesystem::path(out) / file.name).string(), file.content);
      names.insert(file.name);
    }
  outputs.commit();
  return names;
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
  std::vector<Findings> findings;
  if (!args.source.empty()) findings.push_back(inspect_sentence(args, trained));
  if (!args.data.empty()) findings.push_back(inspect_corpus(args, trained));
  const std::set<std::string> written = write_together(args.out, findings);
  for (const Findings& found : findings) fmt::print("{}", found.summary);
  remove_earlier_outputs(args.out, written);
  return 0;
}

// A sentence flag: "" would read as the flag left out (not_empty), and white space alone would
// be a sentence of no word, </s> alone.
CLI::Option* add_sentence_option(CLI::App& cmd, const std::string& flag, std::string& sentence,
                                 const std::string& description, const std::string& advice) {
  const CLI::Validator has_words(
      [advice](std::string& text) {
        return data::split_on_whitespace(text).empty() ? "is only white space (" + advice + ")" : std::string();
      },
      "");
  return cmd.add_option(flag, sentence, description)->check(not_empty(advice))->check(has_words);
}

CommandAction setup_inspect(CLI::App& cmd) {
  auto args = std::make_shared<InspectArgs>();
  cmd.add_option("--path", args->path, "Checkpoint (NAME, NAME.safetensors or NAME.json)")->required();
  cmd.add_option("--out", args->out, "Folder for the maps / statistics")
      ->required()
      ->check(not_empty("name the folder for the maps / statistics; '.' is the current one"));
  add_sentence_option(cmd, "--source", args->source, "A raw source sentence: its maps as PNG + JSON",
                      "give a sentence, or leave --source out and give --data DIR for statistics of a split");
  add_sentence_option(cmd, "--target", args->target, "Its raw target (default: the model's beam-search translation)",
                      "give the target sentence, or leave --target out to decode the model's own translation");
  cmd.add_option("--bpe-codes", args->bpe_codes, "BPE codes (default: the ones the checkpoint recorded)");
  cmd.add_flag("--no-tokenize", args->no_tokenize, "--source/--target are tokenized already");
  cmd.add_option("--data", args->data, "Binarized data dir: statistics of a split")
      ->check(not_empty("name the folder `attnlab preprocess` wrote; '.' is the current one"))
      ->check(CLI::ExistingDirectory);
  cmd.add_option("--subset", args->subset, "Split of --data (train, valid, test)");
  cmd.add_option("--compare-to", args->compare_to, "A teacher checkpoint: each head's distance to its map");
  cmd.add_option("--max-tokens", args->max_tokens, "Tokens per batch for --data (longer pairs are left out, counted)")
      ->check(positive_number());
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
