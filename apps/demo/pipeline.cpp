// The teaching demo's stages. See demo.hpp.
#include "apps/demo/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/cli/progress.hpp"
#include "apps/demo/demo_report.hpp"
#include "apps/demo/memory_table.hpp"
#include "apps/demo/variant_comparison.hpp"
#include "apps/training/checkpoint.hpp"
#include "apps/training/peak_memory.hpp"
#include "apps/training/trainer.hpp"
#include "apps/task/translation_task.hpp"
#include "apps/generation/knn_datastore_file.hpp"
#include "apps/generation/translator.hpp"
#include "core/device_runtime.hpp"
#include "core/matmul_precision.hpp"
#include "core/threads.hpp"
#include "data/bleu.hpp"
#include "data/bleu_significance.hpp"
#include "data/bpe_apply.hpp"
#include "data/bpe_learn.hpp"
#include "data/moses_detokenizer.hpp"
#include "data/moses_tokenizer.hpp"
#include "data/text_io.hpp"
#include "nn/checkpoint_names.hpp"
#include "nn/search/knn_datastore.hpp"

namespace attn::app {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSource = "en";
constexpr const char* kTarget = "de";
constexpr const char* kSplits[] = {"train", "valid", "test"};
constexpr int kStages = 8;
constexpr int kAveragedCheckpoints = 5;
constexpr int64_t kSavesPerRun = 10;  // update checkpoints over the budget; the last 5 are averaged
constexpr uint64_t kSplitSeed = 1;
constexpr const char* kDemoFolders = "the demo's folders";  // who named them, in errors

// "1 thread", "2 threads".
std::string threads_in_words(int64_t threads) { return fmt::format("{} thread{}", threads, threads == 1 ? "" : "s"); }

struct DemoPaths {
  fs::path root, raw, tok, bpe, codes, data_bin, checkpoints, averaged, gen;
  explicit DemoPaths(const std::string& out)
      : root(out), raw(root / "raw"), tok(root / "tok"), bpe(root / "bpe"), codes(bpe / "codes"),
        data_bin(root / "data-bin"), checkpoints(root / "checkpoints"), averaged(checkpoints / "checkpoint_avg"),
        gen(root / "gen") {}
  static std::string file(const fs::path& dir, const std::string& split, const std::string& lang) {
    return (dir / fmt::format("{}.{}", split, lang)).string();
  }
};

void stage(int number, const std::string& what, bool skipped) {
  fmt::print("[{}/{}] {}{}\n", number, kStages, what, skipped ? " (done before, skipped)" : "");
  flush_now(stdout);
}

// True when every path exists (the outputs of a stage, each written atomically).
bool all_exist(const std::vector<std::string>& paths) {
  return std::all_of(paths.begin(), paths.end(), [](const std::string& p) { return fs::exists(p); });
}

std::vector<std::string> split_files(const fs::path& dir) {
  std::vector<std::string> files;
  for (const char* split : kSplits)
    for (const char* lang : {kSource, kTarget}) files.push_back(DemoPaths::file(dir, split, lang));
  return files;
}

std::string joined_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

void prepare_raw(const DemoPaths& paths, const DemoOptions& options) {
  const bool done = all_exist(split_files(paths.raw));
  stage(1, fmt::format("Ding EN-DE sentence pairs and {} dictionary entries from {} -> {}", options.dictionary_entries,
                       options.ding_path, paths.raw.string()),
        done);
  if (done) return;
  data::DingCorpus corpus = data::read_ding_corpus(options.ding_path);
  data::CorpusSplit split = data::split_corpus(std::move(corpus.sentences), kSplitSeed);
  const size_t sentences = split.train.size();
  data::add_entries_to_train(split, std::move(corpus.entries), size_t(options.dictionary_entries), kSplitSeed);
  data::write_corpus_split(split, paths.raw.string());
  fmt::print("      train {} sentence pairs + {} entries, valid {}, test {} sentence pairs\n", sentences,
             split.train.size() - sentences, split.valid.size(), split.test.size());
}

void tokenize(const DemoPaths& paths) {
  const bool done = all_exist(split_files(paths.tok));
  stage(2, "Moses tokenizer -> " + paths.tok.string(), done);
  if (done) return;
  data::create_folders(paths.tok.string(), kDemoFolders);
  for (const char* lang : {kSource, kTarget}) {
    const data::MosesTokenizer tokenizer(data::moses_tokenizer_options(lang));
    for (const char* split : kSplits) {
      std::vector<std::string> lines = data::read_lines(DemoPaths::file(paths.raw, split, lang));
#pragma omp parallel for schedule(dynamic, 64)
      for (size_t i = 0; i < lines.size(); ++i) lines[i] = tokenizer.tokenize(lines[i]);
      data::write_file_atomic(DemoPaths::file(paths.tok, split, lang), joined_lines(lines));
    }
  }
}

void learn_bpe(const DemoPaths& paths, const DemoOptions& options) {
  const bool done = fs::exists(paths.codes);
  stage(3, fmt::format("joint BPE, {} merges -> {}", options.bpe_merges, paths.codes.string()), done);
  if (done) return;
  data::create_folders(paths.bpe.string(), kDemoFolders);
  const data::JointBpeResult result =
      data::learn_joint_bpe({DemoPaths::file(paths.tok, "train", kSource),
                             DemoPaths::file(paths.tok, "train", kTarget)},
                            {.num_symbols = options.bpe_merges, .min_frequency = 2});
  data::write_file_atomic(paths.codes.string(), data::format_bpe_codes(result.codes.merges));
}

void apply_bpe(const DemoPaths& paths) {
  const bool done = all_exist(split_files(paths.bpe));
  stage(4, "BPE applied -> " + paths.bpe.string(), done);
  if (done) return;
  const data::BpeEncoder encoder(data::BpeCodes::read(paths.codes.string()), {});
  for (const std::string& tok : split_files(paths.tok)) {
    const data::TextLines lines = data::split_lines(data::read_utf8_file(tok), data::LineMode::SplitLines);
    data::write_file_atomic((paths.bpe / fs::path(tok).filename()).string(), encoder.apply(lines));
  }
}

void binarize(const DemoPaths& paths) {
  const std::string last = data::binarized_path(paths.data_bin.string(), "test", kSource, kTarget, kTarget);
  const bool done = fs::exists(last);
  stage(5, "joined dictionary + binarized splits -> " + paths.data_bin.string(), done);
  if (done) return;
  data::create_folders(paths.data_bin.string(), kDemoFolders);
  const data::Dictionary dict = data::build_dictionary(
      {DemoPaths::file(paths.bpe, "train", kSource), DemoPaths::file(paths.bpe, "train", kTarget)}, 0, -1, 8,
      std::max(1, get_num_threads()));
  for (const char* lang : {kSource, kTarget}) dict.save((paths.data_bin / data::dictionary_file_name(lang)).string());
  fmt::print("      dictionary: {} types\n", dict.size());
  for (const char* split : kSplits)
    for (const char* lang : {kSource, kTarget})  // the test target last: its presence marks the stage done
      data::binarize_text_file(DemoPaths::file(paths.bpe, split, lang), dict,
                               data::binarized_path(paths.data_bin.string(), split, kSource, kTarget, lang));
}

// The recipe of the tuning runs (README "Tuning runs"), shared by the demo's training and the
// comparison of variants, whose table was measured with it: 1,536-token batches, warmup 300.
TrainerOptions recipe_options(const DemoPaths& paths, const DemoOptions& options) {
  TrainerOptions o;
  o.data_dir = paths.data_bin.string();
  o.source_lang = kSource;
  o.target_lang = kTarget;
  o.bpe_codes = paths.codes.string();
  // Pre-norm (docs/models.md §1.4): at this learning rate it learns markedly faster in the first
  // thousand updates than post-norm (valid ppl 182 vs 223 after 370 updates on this corpus).
  o.model_overrides = {"share_all_embeddings=true", "dropout=0.1", "encoder_normalize_before=true",
                       "decoder_normalize_before=true"};
  o.label_smoothing = 0.1;
  o.optimizer = "adam";
  o.adam_beta1 = 0.9;
  o.adam_beta2 = 0.98;
  o.lr_scheduler = "inverse_sqrt";
  o.lr = {2e-3};
  o.warmup_updates = 300;
  o.warmup_init_lr = 1e-7;
  o.max_tokens = 1536;
  o.max_update = options.max_update;
  o.seed = 1;
  o.compute = options.compute;
  o.save_dir = paths.checkpoints.string();
  // Update checkpoints, not epoch ones, are averaged: with dictionary entries an epoch can be
  // longer than the whole budget.
  o.checkpoints.save_epoch_checkpoints = false;
  o.checkpoints.save_interval_updates = std::max<int64_t>(1, options.max_update / kSavesPerRun);
  o.checkpoints.keep_interval_updates = kAveragedCheckpoints;
  o.validate_at_update_saves = false;  // they are averaged, not compared: the run's end validates
  o.log_interval = 50;
  return o;
}

// The demo's training: kDemoArch with kDemoMaxTokens-token batches and peak learning rate
// kDemoLr, its warmup spanning the same target tokens as the recipe's.
TrainerOptions demo_training_options(const DemoPaths& paths, const DemoOptions& options) {
  TrainerOptions o = recipe_options(paths, options);
  o.arch = kDemoArch;
  o.lr = {kDemoLr};
  o.warmup_updates = *o.warmup_updates * o.max_tokens / kDemoMaxTokens;
  o.max_tokens = kDemoMaxTokens;
  o.model_overrides.push_back(fmt::format("dropout={}", options.dropout));  // after the recipe's: the later wins
  o.weight_decay = options.weight_decay;
  return o;
}

// Throughput and memory are those of the last run that trained (a rerun that finds training
// done reports its predecessor's, not its own idle figures).
struct TrainingOutcome {
  int64_t updates = 0;
  double tokens_per_second = 0.0;
  PeakMemory memory;
};

TrainingOutcome train(const DemoPaths& paths, const DemoOptions& options) {
  stage(6,
        fmt::format("train {} for {} updates (dropout {}, weight decay {}) -> {}", kDemoArch, options.max_update,
                    options.dropout, options.weight_decay, paths.checkpoints.string()),
        false);
  Trainer trainer(demo_training_options(paths, options));
  fmt::print("      {} parameters; training on {}, {} matrix products\n", trainer.model().num_parameters(),
             threads_in_words(get_num_threads()), to_string(matmul_precision()));
  const TrainingSummary summary = trainer.train();
  const nlohmann::json trained = last_training_summary(paths.checkpoints.string());
  return {summary.num_updates, trained.value("tokens_per_second", 0.0),
          {trained.value("peak_tensor_mib", 0.0), trained.value("peak_resident_mib", 0.0)}};
}

bool newer(const fs::path& output, const fs::path& input) {
  return fs::exists(output) && fs::exists(input) && fs::last_write_time(output) >= fs::last_write_time(input);
}

void average(const DemoPaths& paths) {
  const fs::path last = metadata_path((paths.checkpoints / "checkpoint_last").string());
  const bool done = newer(metadata_path(paths.averaged.string()), last);
  // The newest update checkpoints (nn/checkpoint_names: a stray name such as
  // checkpoint_1_99999999999999999999.json is not one).
  std::vector<std::string> bases;
  for (const nn::NumberedCheckpoint& found :
       nn::numbered_checkpoints(paths.checkpoints.string(), nn::CheckpointNumbering::Update, ".json"))
    if (bases.size() < size_t(kAveragedCheckpoints)) bases.push_back(checkpoint_base(found.path));
  if (bases.empty()) bases.push_back(checkpoint_base(last.string()));
  stage(7, fmt::format("average {} checkpoint(s) -> {}", bases.size(), weights_path(paths.averaged.string())), done);
  if (!done) average_checkpoints_into(bases, paths.averaged.string());
}

struct Translations {
  std::vector<std::string> tokenized, detokenized;
  double seconds = 0;      // decoding time (0 when read back from an earlier run)
  int64_t tokens = 0;      // target tokens generated, </s> included
};

// Outputs of at most 1.5 × source + 10 tokens: an undertrained model's loops end early.
constexpr double kDemoMaxLenA = 1.5;
constexpr int64_t kDemoMaxLenB = 10;
constexpr int64_t kDemoKnnNeighbours = 16;
constexpr double kDemoKnnLengthPenalty = 1.5;
// The temperature in the keys' unit (nn/search/knn_datastore.hpp): T = 0.07 σ² is the T 20
// chosen on the default model (σ² 285), and carries that sharpness to the longer budgets' models,
// whose keys spread wider (σ² 600–910 at 18,000 updates): +0.3 to +1.1 BLEU on test there (mean
// +0.6, seven runs) over a fixed T 20 (README "Tuning runs", "... a temperature in the keys' unit").
constexpr double kDemoKnnRelativeTemperature = 0.07;
// The 128-number decoder states reduced to 64 by PCA (half the search's products) and split
// into 256 k-means lists, of which each query searches its 32 nearest (an eighth of the keys,
// 99.7% of the exact neighbours): the same BLEU within noise (README "Tuning runs", "A faster
// search").
constexpr nn::KnnBuildOptions kDemoKnnBuild{.reduced_dims = 64, .lists = 256};
constexpr int64_t kDemoKnnProbes = 32;

nn::KnnRetrieval demo_knn_retrieval(std::shared_ptr<const nn::KnnDatastore> datastore, double lambda) {
  const double temperature = nn::knn_relative_temperature(*datastore, kDemoKnnRelativeTemperature);
  return {std::move(datastore), kDemoKnnNeighbours, temperature, lambda, kDemoKnnProbes};
}
constexpr const char* kKnnDatastoreFile = "knn_datastore.safetensors";  // in gen/

// How the demo decodes the test set, in words: the summary's line and the decode cache's key.
std::string describe_decoding(int64_t beam, double knn_lambda) {
  if (knn_lambda == 0.0) return fmt::format("beam {}, length penalty 1", beam);
  return fmt::format(
      "beam {}, kNN-MT over the training pairs (k {}, temperature {} × the keys' variance, lambda {}, keys "
      "reduced to {} dims in {} lists, {} searched), length penalty {}",
      beam, kDemoKnnNeighbours, kDemoKnnRelativeTemperature, knn_lambda, kDemoKnnBuild.reduced_dims,
      kDemoKnnBuild.lists, kDemoKnnProbes, kDemoKnnLengthPenalty);
}

// A path as one word of a shell command: as it is, or single-quoted when it holds other
// characters than letters, digits and _ . / -.
std::string shell_word(const std::string& path) {
  if (std::all_of(path.begin(), path.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) ||
                                                                c == '_' || c == '.' || c == '/' || c == '-'; }))
    return path;
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The `attnlab translate` command that decodes typed sentences as the test set was decoded:
// the same model, search, threads, products and device.
std::string translate_command(const DemoPaths& paths, const DemoOptions& options) {
  std::error_code error;
  const fs::path binary = fs::read_symlink("/proc/self/exe", error);
  std::string command = fmt::format(
      "{} translate --path {} --beam {} --max-len-a {} --max-len-b {} --threads {} --matmul-precision {}{}",
      shell_word(error ? "attnlab" : binary.string()), shell_word(paths.averaged.string()), options.beam,
      kDemoMaxLenA, kDemoMaxLenB, get_num_threads(), to_string(matmul_precision()),
      options.compute.device == "cpu" ? "" : " --device " + options.compute.device);
  if (options.knn_lambda == 0.0) return command;
  return command + fmt::format(" --lenpen {} --knn-datastore-file {} --knn-k {} --knn-relative-temperature {} "
                               "--knn-lambda {} --knn-probes {}",
                               kDemoKnnLengthPenalty, shell_word((paths.gen / kKnnDatastoreFile).string()),
                               kDemoKnnNeighbours, kDemoKnnRelativeTemperature, options.knn_lambda, kDemoKnnProbes);
}

// The demo's kNN-MT search options: a datastore of the training pairs under `model`, kept in
// gen_dir so that a decode with another lambda reads it back.
void add_knn(nn::SearchOptions& search, nn::EncoderDecoderModel& model, const TranslationTask& task,
             const fs::path& gen_dir, double lambda) {
  const auto start = std::chrono::steady_clock::now();
  const KnnDatastoreFromFile store =
      knn_datastore_for(model, open_split(task, "train"), (gen_dir / kKnnDatastoreFile).string(), kDemoKnnBuild);
  search.knn = std::make_shared<const nn::KnnRetrieval>(demo_knn_retrieval(store.datastore, lambda));
  fmt::print("      kNN-MT datastore: {} decoder states of the training pairs as keys of {}, {}, in {:.0f} s "
             "(k {}, T {}, lambda {})\n",
             store.datastore->size(), describe_knn_keys(*store.datastore), store.origin,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), kDemoKnnNeighbours,
             describe_knn_relative_temperature(*store.datastore, kDemoKnnRelativeTemperature), lambda);
  search.lenpen = kDemoKnnLengthPenalty;
}

// Where a decode of the test set lives in its gen_dir.
struct DecodeFiles {
  explicit DecodeFiles(const fs::path& gen_dir)
      : tokenized(gen_dir / "test.tok.de"), detokenized(gen_dir / "test.de"), timing(gen_dir / "timing.json") {}
  fs::path tokenized, detokenized;
  fs::path timing;  // {"seconds", "tokens", "decoding": describe_decoding()}
};

// The decode of the test set in gen_dir, when it is newer than `checkpoint` and timing.json says
// it was made as `decoding` (describe_decoding()).
std::optional<Translations> earlier_decode(const std::string& checkpoint, const fs::path& gen_dir,
                                           const std::string& decoding) {
  const DecodeFiles files(gen_dir);
  if (!newer(files.detokenized, metadata_path(checkpoint)) || !fs::exists(files.tokenized) ||
      !fs::exists(files.timing))
    return std::nullopt;
  const auto t =
      nlohmann::json::parse(data::read_utf8_file(files.timing.string()), nullptr, /*allow_exceptions=*/false);
  if (!t.is_object() || t.value("decoding", "") != decoding) return std::nullopt;
  return Translations{data::read_lines(files.tokenized.string()), data::read_lines(files.detokenized.string()),
                      t.value("seconds", 0.0), t.value("tokens", int64_t(0))};
}

// Beam search with `checkpoint` on the test set into gen_dir's DecodeFiles, with kNN-MT when
// knn_lambda > 0.
Translations decode_test_set(const std::string& checkpoint, const fs::path& gen_dir, const DemoPaths& paths,
                             const DemoOptions& options, double knn_lambda) {
  const DecodeFiles files(gen_dir);
  const TrainedModel trained = load_trained_model(checkpoint, parse_device(options.compute.device));
  const TranslationTask task = open_task_for(trained, paths.data_bin.string());
  const std::vector<std::vector<int64_t>> sources = open_split(task, "test").source.sentences();
  DecodingOptions decoding;
  decoding.search.beam = options.beam;
  decoding.search.max_len_a = kDemoMaxLenA;
  decoding.search.max_len_b = kDemoMaxLenB;
  decoding.max_tokens = 4096;
  if (knn_lambda > 0.0) add_knn(decoding.search, *trained.model, task, gen_dir, knn_lambda);
  ProgressDisplay progress(stdout, ProgressDisplay::is_terminal(stdout));
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const auto hypotheses = translate_sentences(*trained.model, sources, decoding, [&](size_t done_sentences) {
    const double fraction = double(done_sentences) / double(sources.size());
    progress.update(fraction, fmt::format("{}/{} sentences | ETA {}", done_sentences, sources.size(),
                                          format_eta(elapsed(), fraction)));
  });
  progress.finish();
  const data::MosesDetokenizer detokenizer(data::parse_moses_language(kTarget));
  Translations out;
  out.seconds = elapsed();
  for (const auto& nbest : hypotheses) {
    out.tokens += int64_t(nbest.front().tokens.size());
    out.tokenized.push_back(trained.task.target_dict.decode(nbest.front().tokens, "@@ "));
    out.detokenized.push_back(detokenizer.detokenize(out.tokenized.back()));
  }
  data::create_folders(gen_dir.string(), kDemoFolders);
  data::write_file_atomic(files.tokenized.string(), joined_lines(out.tokenized));
  data::write_file_atomic(files.detokenized.string(), joined_lines(out.detokenized));
  const nlohmann::json timing = {
      {"seconds", out.seconds}, {"tokens", out.tokens}, {"decoding", describe_decoding(options.beam, knn_lambda)}};
  data::write_file_atomic(files.timing.string(), timing.dump() + "\n");
  return out;
}

// decode_test_set(), unless gen_dir already holds its earlier_decode().
Translations earlier_or_new_decode(const std::string& checkpoint, const fs::path& gen_dir, const DemoPaths& paths,
                                   const DemoOptions& options, double knn_lambda) {
  if (std::optional<Translations> earlier =
          earlier_decode(checkpoint, gen_dir, describe_decoding(options.beam, knn_lambda)))
    return std::move(*earlier);
  return decode_test_set(checkpoint, gen_dir, paths, options, knn_lambda);
}

Translations generate(const DemoPaths& paths, const DemoOptions& options) {
  std::optional<Translations> earlier = earlier_decode(paths.averaged.string(), paths.gen,
                                                       describe_decoding(options.beam, options.knn_lambda));
  stage(8,
        fmt::format("beam search (beam {}{}) on the test set -> {}", options.beam,
                    options.knn_lambda > 0.0 ? fmt::format(", kNN-MT lambda {}", options.knn_lambda) : "",
                    DecodeFiles(paths.gen).detokenized.string()),
        earlier.has_value());
  if (earlier) return std::move(*earlier);
  return decode_test_set(paths.averaged.string(), paths.gen, paths, options, options.knn_lambda);
}

data::BleuScore test_sacrebleu(const DemoPaths& paths, const std::vector<std::string>& detokenized) {
  return data::sacrebleu_corpus_score(detokenized, {data::read_lines(DemoPaths::file(paths.raw, "test", kTarget))},
                                      data::SacreBleuOptions{});
}

// The report's attention examples: the first two test pairs of at most 10 source words.
std::vector<std::pair<std::string, std::string>> attention_pairs(const std::vector<std::string>& sources,
                                                                 const std::vector<std::string>& references) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < sources.size() && pairs.size() < 2; ++i)
    if (std::count(sources[i].begin(), sources[i].end(), ' ') < 10) pairs.emplace_back(sources[i], references[i]);
  return pairs;
}

// The variants' comparison (--compare): each teaching variant trained for the same updates.
struct Comparison {
  std::vector<ReportTable> tables;
  std::vector<ReportAttention> maps;
};

Comparison compare(const DemoPaths& paths, const DemoOptions& options) {
  if (!options.compare) return {};
  const std::vector<std::pair<std::string, std::string>> pairs = attention_pairs(
      data::read_lines(DemoPaths::file(paths.raw, "test", kSource)),
      data::read_lines(DemoPaths::file(paths.raw, "test", kTarget)));
  ComparisonSetup setup{(paths.root / "compare").string(), recipe_options(paths, options), options.compare_updates,
                        options.compare_only, {}, pairs.empty() ? "" : pairs[0].first,
                        pairs.empty() ? "" : pairs[0].second};
  setup.score_test_set = [&](const std::string& checkpoint, const std::string& gen_dir) {
    const Translations t = earlier_or_new_decode(checkpoint, gen_dir, paths, options, /*knn_lambda=*/0.0);
    return ComparisonSetup::Scored{test_sacrebleu(paths, t.detokenized).score, t.seconds, t.tokens};
  };
  const std::vector<VariantResult> results = compare_variants(setup);
  const ReportTable table = comparison_table(results, options.compare_updates);
  fmt::print("\n== {} ==\n", table.caption);
  for (const auto& row : table.rows) fmt::print("  {}\n", fmt::join(row, " | "));
  Comparison c{{table}, {}};
  if (!pairs.empty()) c.maps.push_back(comparison_maps(results, setup));
  return c;
}

DemoSummary summarize(const DemoPaths& paths, const DemoOptions& options, const Translations& hypotheses,
                      const TrainingOutcome& training) {
  const std::vector<std::string> sources = data::read_lines(DemoPaths::file(paths.raw, "test", kSource));
  const std::vector<std::string> references = data::read_lines(DemoPaths::file(paths.raw, "test", kTarget));
  const std::vector<std::string> tokenized_references = data::read_lines(DemoPaths::file(paths.tok, "test", kTarget));
  const data::SacreBleuOptions sacre;
  const std::vector<data::BleuStats> segments =
      data::sacrebleu_segments_stats(hypotheses.detokenized, {references}, sacre);
  const data::BleuScore sacre_score = data::sacrebleu_compute(data::sum_stats(segments, sacre.max_order), sacre);
  const data::BleuScore tokenized_score =
      data::multibleu_compute(data::multibleu_stats(hypotheses.tokenized, {tokenized_references}, false));
  DemoSummary summary;
  // How much the score owes to the choice of the 1,000 test sentences: sacreBLEU's --confidence
  // (1,000 resamples, seed 12345).
  const data::BootstrapOptions bootstrap;
  summary.sacrebleu_confidence = data::bootstrap_confidence(segments, sacre, bootstrap);
  summary.sacrebleu_signature = data::sacrebleu_signature(sacre, 1, false, data::bootstrap_signature(bootstrap));
  summary.sacrebleu =
      data::format_sacrebleu_score(sacre_score, summary.sacrebleu_signature, 2, summary.sacrebleu_confidence);
  summary.sacrebleu_score = sacre_score.score;
  summary.tokenized_bleu = data::format_multibleu_score(tokenized_score);
  summary.test_sentences = int64_t(references.size());
  for (size_t i = 0; i < std::min<size_t>(size_t(options.examples), sources.size()); ++i)
    summary.examples.push_back({sources[i], references[i], hypotheses.detokenized[i]});
  summary.updates = training.updates;
  summary.training_tokens_per_second = training.tokens_per_second;
  summary.threads = get_num_threads();
  summary.matmul_precision = to_string(matmul_precision());
  summary.decoding = describe_decoding(options.beam, options.knn_lambda);
  summary.translate_command = translate_command(paths, options);
  summary.peak_tensor_mib = training.memory.tensor_mib;
  summary.peak_resident_mib = training.memory.resident_mib;
  return summary;
}

void print_summary(const DemoPaths& paths, const DemoSummary& summary) {
  fmt::print("\n== Results on the Ding EN-DE test set ({} sentences) ==\n", summary.test_sentences);
  fmt::print("sacreBLEU:       {}\n", summary.sacrebleu);
  fmt::print("tokenized BLEU:  {}\n", summary.tokenized_bleu);
  fmt::print("decoding:        {}\n", summary.decoding);
  fmt::print("\nExamples:\n");
  for (const DemoExample& example : summary.examples)
    fmt::print("  SRC  {}\n  REF  {}\n  HYP  {}\n\n", example.source, example.reference, example.hypothesis);
  fmt::print("training: {} updates at {:.0f} target tokens/s on {} ({} products)\n", summary.updates,
             summary.training_tokens_per_second, threads_in_words(summary.threads), summary.matmul_precision);
  fmt::print("peak memory: {:.1f} MiB in tensors (allocator peak), {:.1f} MiB resident (peak RSS)\n",
             summary.peak_tensor_mib, summary.peak_resident_mib);
  fmt::print("everything is in {}: raw/ tok/ bpe/ data-bin/ checkpoints/ (train_log.jsonl) gen/ summary.json "
             "report.html\n",
             fs::absolute(paths.root).string());
  fmt::print("translate sentences of your own as the test set was (type them, one per line; Ctrl-D ends):\n  {}\n",
             summary.translate_command);
}

void write_summary(const DemoPaths& paths, const DemoSummary& summary) {
  nlohmann::json examples = nlohmann::json::array();
  for (const DemoExample& example : summary.examples)
    examples.push_back(
        {{"source", example.source}, {"reference", example.reference}, {"hypothesis", example.hypothesis}});
  const nlohmann::json json = {
      {"sacrebleu",
       {{"score", summary.sacrebleu_score},
        {"bootstrap_mean", summary.sacrebleu_confidence.mean},
        {"bootstrap_ci95", summary.sacrebleu_confidence.ci},
        {"line", summary.sacrebleu},
        {"signature", summary.sacrebleu_signature}}},
      {"tokenized_bleu", summary.tokenized_bleu},
      {"decoding", summary.decoding},
      {"translate_command", summary.translate_command},
      {"test_sentences", summary.test_sentences},
      {"examples", examples},
      {"training", {{"updates", summary.updates}, {"target_tokens_per_second", summary.training_tokens_per_second},
                    {"threads", summary.threads}, {"matmul_precision", summary.matmul_precision}}},
      {"memory", {{"peak_tensor_mib", summary.peak_tensor_mib}, {"peak_resident_mib", summary.peak_resident_mib}}}};
  data::write_file_atomic((paths.root / "summary.json").string(), json.dump(2) + "\n");
}

// The report's table of what kNN-MT's memory contributed to the first test sentence's
// translation (memory_table.hpp); none with plain beam search.
std::vector<ReportTable> memory_tables(const DemoPaths& paths, const DemoOptions& options,
                                       const Translations& hypotheses) {
  if (options.knn_lambda == 0.0 || hypotheses.tokenized.empty()) return {};
  const TrainedModel trained = load_trained_model(paths.averaged.string(), parse_device(options.compute.device));
  const TranslationTask task = open_task_for(trained, paths.data_bin.string());
  const SplitCorpora train = open_split(task, "train");
  const nn::KnnRetrieval retrieval = demo_knn_retrieval(
      knn_datastore_for(*trained.model, train, (paths.gen / kKnnDatastoreFile).string(), kDemoKnnBuild).datastore,
      options.knn_lambda);
  const data::BpeEncoder encoder(data::BpeCodes::read(paths.codes.string()), {});
  const std::vector<int32_t> ids = task.target_dict.encode_line(encoder.process_line(hypotheses.tokenized[0])).ids;
  const std::string source_text = data::read_lines(DemoPaths::file(paths.raw, "test", kSource)).at(0);
  return {knn_memory_table(*trained.model, retrieval, task.target_dict, train.target.sentences(),
                           open_split(task, "test").source.sentences().at(0),
                           std::vector<int64_t>(ids.begin(), ids.end()),
                           fmt::format("“{}” → “{}”", source_text, hypotheses.detokenized[0]))};
}

// report.html: the summary with the training curves, the attention maps of two short test
// pairs, `tables` (what kNN-MT's memory contributed), and the comparison of variants when
// there is one (demo_report.hpp).
void write_report(const DemoPaths& paths, const DemoSummary& summary, const Comparison& comparison,
                  std::vector<ReportTable> tables) {
  tables.insert(tables.end(), comparison.tables.begin(), comparison.tables.end());
  std::vector<ReportExample> examples;
  for (const DemoExample& e : summary.examples) examples.push_back({e.source, e.reference, e.hypothesis});
  const std::string report_path = (paths.root / "report.html").string();
  const size_t report_bytes = write_demo_report(
      {.title = fmt::format("attnlab demo: {} on the Ding EN→DE corpus", kDemoArch),
       .headline = fmt::format("sacreBLEU {:.2f} ± {:.2f} (95% interval over resamples of the test set)",
                               summary.sacrebleu_score, summary.sacrebleu_confidence.ci),
       .facts = {{"sacreBLEU", summary.sacrebleu},
                 {"tokenized BLEU", summary.tokenized_bleu},
                 {"test sentences", std::to_string(summary.test_sentences)},
                 {"decoding", summary.decoding},
                 {"training", fmt::format("{} updates at {:.0f} target tokens/s on {}, {} matrix products",
                                          summary.updates, summary.training_tokens_per_second,
                                          threads_in_words(summary.threads), summary.matmul_precision)},
                 {"peak memory", fmt::format("{:.1f} MiB in tensors, {:.1f} MiB resident", summary.peak_tensor_mib,
                                             summary.peak_resident_mib)}},
       .examples = examples,
       .train_log = (paths.checkpoints / "train_log.jsonl").string(),
       .run_name = kDemoArch,
       .checkpoint = paths.averaged.string(),
       .attention_pairs = attention_pairs(data::read_lines(DemoPaths::file(paths.raw, "test", kSource)),
                                          data::read_lines(DemoPaths::file(paths.raw, "test", kTarget))),
       .tables = tables,
       .extra_attention = comparison.maps},
      report_path);
  fmt::print("report: {} ({:.1f} MiB; open it in a browser)\n", report_path, double(report_bytes) / (1 << 20));
}

}  // namespace

DemoSummary run_demo(const DemoOptions& options) {
  apply_compute_options(options.compute);
  const DemoPaths paths(options.out_dir);
  data::create_folders(paths.root.string(), "--out");
  prepare_raw(paths, options);
  tokenize(paths);
  learn_bpe(paths, options);
  apply_bpe(paths);
  binarize(paths);
  const TrainingOutcome training = train(paths, options);
  average(paths);
  const Translations hypotheses = generate(paths, options);
  const DemoSummary summary = summarize(paths, options, hypotheses, training);
  write_summary(paths, summary);
  write_report(paths, summary, compare(paths, options), memory_tables(paths, options, hypotheses));
  print_summary(paths, summary);
  return summary;
}

}  // namespace attn::app
