// End-to-end tests of the `attnlab` binary (README.md "Commands", "Preparing data",
// "Training and decoding"): every test runs the real executable (ATTNLAB_BINARY) through the
// shell as a user would, on tiny inputs in a TempDir, and checks its exit code, what it prints
// and what it writes:
//   * the text tools byte for byte against tests/vectors (docs/mt-tools.md §1 BPE, §2
//     Moses, §3 BLEU, §4 fairseq dictionaries);
//   * the model commands (train, validate, generate, average, translate; docs/models.md
//     §1.6–1.11) on 64 sentence pairs and a one-layer D=32 Transformer, and exact resume;
//   * bad input — a missing or malformed file, an unknown flag, a corrupt checkpoint — which
//     must end with exit code 1 (a runtime error: one line "attnlab: error: ..." naming the
//     file, and the line when there is one) or 2 (a command-line error), never a signal or a
//     hang (each run is under `timeout`, whose 124 fails the exit-code checks).
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "apps/demo/demo_report.hpp"
#include "apps/interop/torch_file.hpp"
#include "apps/training/checkpoint.hpp"
#include "apps/training/save_dir_lock.hpp"
#include "apps/training/tensorboard_events.hpp"
#include "apps/training/trainer.hpp"
#include "cli_runner.hpp"
#include "core/safetensors.hpp"
#include "data/binarized_corpus.hpp"
#include "data/dictionary.hpp"
#include "data/little_endian.hpp"
#include "data/post_process.hpp"
#include "test_support.hpp"

using namespace attn::test;
namespace fs = std::filesystem;

namespace {

std::string joined_lines(const std::vector<std::string>& lines, size_t begin, size_t end) {
  std::string text;
  for (size_t i = begin; i < end; ++i) text += lines[i] + "\n";
  return text;
}

// The flags of a one-layer D=32 Transformer trained with Adam on one thread (bit-reproducible).
const std::vector<std::string> kTinyTraining = {
    "--arch", "transformer_tiny", "--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32",
    "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2", "--share-all-embeddings",
    "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", "0.003", "--lr-scheduler", "inverse_sqrt",
    "--warmup-updates", "4", "--label-smoothing", "0.1", "--max-tokens", "512", "--threads", "1",
    "--progress", "lines", "--log-interval", "1"};

// `train DATA_DIR --save-dir SAVE_DIR` with the tiny model's flags.
std::vector<std::string> tiny_training_args(const std::string& data_dir, const std::string& save_dir) {
  std::vector<std::string> args = {"train", data_dir, "--save-dir", save_dir};
  args.insert(args.end(), kTinyTraining.begin(), kTinyTraining.end());
  return args;
}

// `train` of the transformer_tiny preset on fairseq-preprocess's own data-bin of the test
// vectors (150 training pairs, one dictionary per language) with `flags`, run in dir.
CommandResult train_on_fairseq_bin(const TempDir& dir, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"train", vector_path("own/fairseq/data-bin"), "--arch", "transformer_tiny",
                                   "--threads", "1", "--no-progress-bar"};
  args.insert(args.end(), flags.begin(), flags.end());
  return run_attnlab(dir, args);
}

// The number of non-overlapping matches of `pattern` in `text`.
std::ptrdiff_t count_matches(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
}

// The tiny model trained on the workspace's data-bin/ into `save_dir`, stopping as `stop` says.
CommandResult run_tiny_training(const TempDir& workspace, const std::string& save_dir,
                                const std::vector<std::string>& stop) {
  std::vector<std::string> args = tiny_training_args("data-bin", save_dir);
  args.insert(args.end(), {"--bpe-codes", workspace.file("bpe/codes")});
  args.insert(args.end(), stop.begin(), stop.end());
  return run_attnlab(workspace, args);
}

// The README's pipeline, run once with the CLI itself: 80 sentence pairs of the Moses test
// corpus (moses/corpus.{en,de}: English lines 31-110, their translations on German lines
// 32-111) as raw/{train,valid,test}.{en,de} (64/8/8 pairs), tokenized (-a) into tok/, 100
// BPE merges learnt on both sides (bpe/codes) and applied into bpe/, a joined dictionary and
// binarized splits in data-bin/, and the tiny model trained for two epochs into checkpoints/.
struct TrainingWorkspace {
  TempDir dir;
  CommandResult training;

  static const TrainingWorkspace& get() {
    static const TrainingWorkspace workspace;
    return workspace;
  }

 private:
  TrainingWorkspace() {
    write_raw_splits();
    for (const std::string split : {"train", "valid", "test"})
      for (const std::string lang : {"en", "de"}) {
        const CommandResult tokenized =
            run_attnlab(dir, {"tokenize", "-a", "-l", lang}, dir.file("raw/" + split + "." + lang));
        require_success(tokenized);
        write_file(dir.file("tok/" + split + "." + lang), tokenized.out);
      }
    require_success(
        run_attnlab(dir, {"bpe", "learn", "-s", "100", "-i", "tok/train.en", "tok/train.de", "-o", "bpe/codes"}));
    for (const std::string split : {"train", "valid", "test"})
      for (const std::string lang : {"en", "de"})
        require_success(run_attnlab(dir, {"bpe", "apply", "-c", "bpe/codes", "-i", "tok/" + split + "." + lang, "-o",
                                          "bpe/" + split + "." + lang}));
    require_success(run_attnlab(dir, {"preprocess", "--source-lang", "en", "--target-lang", "de", "--trainpref",
                                      "bpe/train", "--validpref", "bpe/valid", "--testpref", "bpe/test", "--destdir",
                                      "data-bin", "--joined-dictionary"}));
    training = run_tiny_training(dir, "checkpoints", {"--max-epoch", "2"});
    require_success(training);
  }

  void write_raw_splits() {
    for (const char* folder : {"raw", "tok", "bpe"}) fs::create_directories(dir.dir / folder);
    for (const auto& [lang, first] : {std::pair<std::string, size_t>{"en", 30}, {"de", 31}}) {
      const std::vector<std::string> lines = lines_of(read_file(vector_path("own/moses/corpus." + lang)));
      REQUIRE(lines.size() >= first + 80);
      write_file(dir.file("raw/train." + lang), joined_lines(lines, first, first + 64));
      write_file(dir.file("raw/valid." + lang), joined_lines(lines, first + 64, first + 72));
      write_file(dir.file("raw/test." + lang), joined_lines(lines, first + 72, first + 80));
    }
  }
};

// The output lines of `generate` on the workspace's test split with its last checkpoint and `flags`.
std::vector<std::string> generated_lines(const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"generate", "data-bin", "--path", "checkpoints/checkpoint_last", "--threads", "1"};
  args.insert(args.end(), flags.begin(), flags.end());
  const CommandResult generated = run_attnlab(TrainingWorkspace::get().dir, args);
  require_success(generated);
  return lines_of(generated.out);
}

// Greedy decoding of the workspace's training pairs on the vote of their own datastore alone
// (k 1, λ 1), kept in `file`, with `options` added: the search finds each state's own key when
// it is exact.
CommandResult generate_from_own_keys(const std::string& file, const std::vector<std::string>& options,
                                     const std::string& checkpoint = "checkpoints/checkpoint_last") {
  std::vector<std::string> args{"generate", "data-bin", "--path", checkpoint, "--gen-subset", "train",
                                "--beam", "1", "--knn-datastore", "train", "--knn-datastore-file", file,
                                "--knn-k", "1", "--knn-lambda", "1", "--quiet", "--threads", "1"};
  args.insert(args.end(), options.begin(), options.end());
  return run_attnlab(TrainingWorkspace::get().dir, args);
}

}  // namespace

// --- commands without a model -------------------------------------------------------------

TEST_CASE("info prints the threads, the BLAS, CUDA and the allocator") {
  TempDir dir;
  const CommandResult info = run_attnlab(dir, {"info"});
  require_success(info);
  for (const char* line_start : {"threads: ", "blas: ", "cuda: ", "cpu allocator: "})
    CHECK((contains(info.out, std::string("\n") + line_start) || info.out.starts_with(line_start)));
  CHECK(contains(info.out, "parallel mode OpenMP"));
  // The CUDA line says whether CUDA can be used here and, when it cannot, why.
  const size_t cuda_at = info.out.find("cuda: ");
  const std::string cuda_line = info.out.substr(cuda_at, info.out.find('\n', cuda_at) - cuda_at);
  INFO(cuda_line);
  CHECK((cuda_line.starts_with("cuda: usable") || contains(cuda_line, "but not usable: ") ||
         cuda_line.starts_with("cuda: not built")));
}

TEST_CASE("on a CPU with AVX2, OpenBLAS runs vector kernels, not its SSE-only fallback") {
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    WARN("this CPU has no AVX2: OpenBLAS's SSE kernels are the right ones");
    return;
  }
  TempDir dir;
  unsetenv("OPENBLAS_CORETYPE");  // what the binary chooses itself (apps/cli/runtime_environment.hpp)
  const CommandResult info = run_attnlab(dir, {"info"});
  require_success(info);
  const size_t at = info.out.find("(core ");
  REQUIRE(at != std::string::npos);
  const std::string core = info.out.substr(at + 6, info.out.find(',', at) - at - 6);
  INFO(core);
  for (const char* sse_only : {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom"}) CHECK(core != sse_only);
}

TEST_CASE("info --arch prints a preset's parameter count, and refuses a bad variant setting") {
  TempDir dir;
  const CommandResult big = run_attnlab(dir, {"info", "--arch", "lightconv_wmt_en_de_big", "--share-all-embeddings"});
  require_success(big);
  CHECK(contains(big.out, "lightconv_wmt_en_de_big: 208867504 parameters"));
  CHECK(contains(big.out, "encoder.layers"));
  const CommandResult even = run_attnlab(dir, {"info", "--arch", "lightconv_tiny", "--model-override",
                                               "encoder_kernel_size_list=[3,4,5]"});
  CHECK(even.exit_code == 1);
  CHECK(contains(even.err, "encoder_kernel_size_list holds 4"));
  const CommandResult causal = run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override",
                                                 "decoder_self_mixer=linformer"});
  CHECK(causal.exit_code == 1);
  CHECK(contains(causal.err, "cannot be causal"));
  // The model's flags without a model are refused, not ignored; so is an empty preset name.
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--vocab", "500"}, {"--share-all-embeddings"}, {"--model-override", "dropout=0.2"}}) {
    std::vector<std::string> command = {"info"};
    command.insert(command.end(), flags.begin(), flags.end());
    const CommandResult alone = run_attnlab(dir, command);
    INFO(alone.err);
    CHECK(alone.exit_code == 2);
    CHECK(contains(alone.err, flags.front() + " requires --arch"));
  }
  const CommandResult empty = run_attnlab(dir, {"info", "--arch", ""});
  CHECK(empty.exit_code == 2);
  CHECK(contains(empty.err, "--arch: is empty"));
}

TEST_CASE("--help lists every command of the README") {
  TempDir dir;
  const CommandResult help = run_attnlab(dir, {"--help"});
  require_success(help);
  for (const char* command : {"info", "prepare", "tokenize", "detokenize", "normalize-punctuation",
                              "remove-non-printing-char", "input-from-sgm", "clean-corpus", "bpe", "preprocess",
                              "score", "train", "validate", "average", "generate", "translate", "inspect", "plot", "demo"})
    CHECK(contains(help.out, std::string("  ") + command + " "));
}

TEST_CASE("a value in brackets reaches every command as typed; a list flag still takes several values") {
  TempDir dir;
  const std::string sentence = "the cat sat on the mat all day long\n";
  write_file(dir.file("[hyp]"), sentence);
  write_file(dir.file("[ref]"), sentence);
  write_file(dir.file("ref2"), sentence);
  // A list flag read '[ref]' as the file ref, and '[a,b]' as two values.
  const CommandResult scored = run_attnlab(dir, {"score", "-i", "[hyp]", "-r", "[ref]", "ref2", "-b"});
  require_success(scored);
  CHECK(scored.out == "100.0\n");
  require_runtime_error(run_attnlab(dir, {"average", "--inputs", "[a,b]", "--output", "o"}), {"checkpoint [a,b]:"});
  // '[]' was no value at all: --inputs then took "--output" as its value.
  require_runtime_error(run_attnlab(dir, {"average", "--inputs=[]", "--output", "o"}), {"checkpoint []:"});
  // '[encoder_layers=2]' was the override encoder_layers=2, applied without a word.
  require_runtime_error(
      run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override", "[encoder_layers=2]"}),
      {"unknown key '[encoder_layers'"});
  // A flag of one value never was a list; these stay as typed.
  require_runtime_error(run_attnlab(dir, {"generate", "data", "--path", "[a,b]"}), {"checkpoint [a,b]:"});
  require_command_line_error(run_attnlab(dir, {"score", "-r", "[ref]", "-f", "[sacrebleu]"}), "[sacrebleu] not in");
  // --help still shows a list flag as one of any length.
  const CommandResult help = run_attnlab(dir, {"score", "--help"});
  require_success(help);
  CHECK(contains(help.out, "-r,--ref TEXT:FILE ... REQUIRED"));
}

TEST_CASE("tokenize and detokenize reproduce tokenizer.perl -a and detokenizer.perl") {
  TempDir dir;
  for (const std::string lang : {"en", "de"}) {
    INFO("language " << lang);
    const std::string raw = vector_path("own/moses/corpus." + lang), tokenized = raw + ".tok-a";
    const CommandResult one_thread = run_attnlab(dir, {"tokenize", "-a", "-l", lang}, raw);
    require_success(one_thread);
    CHECK(one_thread.out == read_file(tokenized));
    const CommandResult two_threads = run_attnlab(dir, {"tokenize", "-a", "-l", lang, "-j", "2"}, raw);
    require_success(two_threads);
    CHECK(two_threads.out == one_thread.out);
    const CommandResult detokenized = run_attnlab(dir, {"detokenize", "-l", lang}, tokenized);
    require_success(detokenized);
    CHECK(detokenized.out == read_file(tokenized + ".detok"));
  }
}

TEST_CASE("bpe learn and bpe apply reproduce subword-nmt, on stdin and on files") {
  TempDir dir;
  const CommandResult learned = run_attnlab(dir, {"bpe", "learn", "-s", "200"}, vector_path("own/bpe/train.tok.en-de"));
  require_success(learned);
  CHECK(learned.out == read_file(vector_path("own/bpe/codes.200")));

  require_success(
      run_attnlab(dir, {"bpe", "learn", "-s", "200", "-o", "codes"}, vector_path("own/bpe/train.tok.en-de")));
  CHECK(read_file(dir.file("codes")) == learned.out);
  const CommandResult applied = run_attnlab(dir, {"bpe", "apply", "-c", "codes"}, vector_path("own/bpe/corpus.tok.en"));
  require_success(applied);
  CHECK(applied.out == read_file(vector_path("own/bpe/corpus.bpe200.en")));
  require_success(
      run_attnlab(dir, {"bpe", "apply", "-c", "codes", "-i", vector_path("own/bpe/corpus.tok.de"), "-o", "out.de"}));
  CHECK(read_file(dir.file("out.de")) == read_file(vector_path("own/bpe/corpus.bpe200.de")));
}

TEST_CASE("preprocess writes fairseq's dictionaries and a binarized file per split and side") {
  // The dictionary vectors were built from corpus.bpe200.en (200 lines) and .de (201 lines);
  // an empty line makes the sides parallel without adding a word.
  TempDir dir;
  write_file(dir.file("corpus.en"), read_file(vector_path("own/bpe/corpus.bpe200.en")) + "\n");
  fs::copy_file(vector_path("own/bpe/corpus.bpe200.de"), dir.file("corpus.de"));
  const std::vector<std::string> splits = {"--source-lang", "en", "--target-lang", "de", "--trainpref", "corpus",
                                           "--validpref", "corpus", "--testpref", "corpus"};

  SECTION("joined dictionary") {
    std::vector<std::string> args = {"preprocess", "--destdir", "joined", "--joined-dictionary"};
    args.insert(args.end(), splits.begin(), splits.end());
    const CommandResult preprocessed = run_attnlab(dir, args);
    require_success(preprocessed);
    const std::string expected = read_file(vector_path("own/fairseq/dict.joined.thr0.nwords-1.pad8.txt"));
    CHECK(read_file(dir.file("joined/dict.en.txt")) == expected);
    CHECK(read_file(dir.file("joined/dict.de.txt")) == expected);
    CHECK(contains(preprocessed.out, "Wrote preprocessed data to joined"));
    for (const char* split : {"train", "valid", "test"})
      for (const char* lang : {"en", "de"})
        CHECK(fs::exists(dir.dir / fmt::format("joined/{}.en-de.{}.bin", split, lang)));
  }
  auto train_one_update = [&](const std::string& data_dir) {
    std::vector<std::string> args = tiny_training_args(data_dir, data_dir + "-ckpt");
    args.insert(args.end(), {"--max-update", "1"});
    return run_attnlab(dir, args);
  };
  SECTION("one dictionary per language") {
    std::vector<std::string> args = {"preprocess", "--destdir", "separate"};
    args.insert(args.end(), splits.begin(), splits.end());
    require_success(run_attnlab(dir, args));
    for (const std::string lang : {"en", "de"})
      CHECK(read_file(dir.file("separate/dict." + lang + ".txt")) ==
            read_file(vector_path("own/fairseq/dict." + lang + "-only.thr0.pad8.txt")));
    const CommandResult shared = train_one_update("separate");  // --share-all-embeddings
    CHECK(shared.exit_code != 0);
    CHECK(contains(shared.err, "first entries of the source's"));
  }
  SECTION("a joined dictionary with the target's symbols first (docs/mt-tools.md 4.1)") {
    std::vector<std::string> args = {"preprocess", "--destdir", "target-first", "--joined-dictionary",
                                     "--target-first"};
    args.insert(args.end(), splits.begin(), splits.end());
    require_success(run_attnlab(dir, args));
    const std::string target = read_file(dir.file("target-first/dict.de.txt"));
    CHECK(target == read_file(vector_path("own/fairseq/dict.de-only.thr0.pad8.txt")));
    const std::string joined = read_file(dir.file("target-first/dict.en.txt"));
    CHECK(joined.substr(0, target.size()) == target);
    CHECK(attn::data::Dictionary::parse(joined, "joined").size() % 8 == 0);
    for (const std::string english : {"the", "The"}) CHECK(contains(joined, "\n" + english + " "));
    require_success(train_one_update("target-first"));
    args.erase(std::find(args.begin(), args.end(), "--joined-dictionary"));
    const CommandResult alone = run_attnlab(dir, args);
    CHECK(alone.exit_code != 0);
    CHECK(contains(alone.err, "--target-first builds a --joined-dictionary"));
  }
}

TEST_CASE("train, validate and generate read fairseq-preprocess's data-bin (mmap, lazy); ids beyond its dictionary are refused") {
  TempDir dir;
  fs::copy(vector_path("own/fairseq/data-bin"), dir.dir / "fairseq-bin");
  // Its dictionaries are one per language: the tiny model without --share-all-embeddings.
  std::vector<std::string> args = tiny_training_args("fairseq-bin", "checkpoints");
  args.erase(std::find(args.begin(), args.end(), "--share-all-embeddings"));
  args.insert(args.end(), {"--max-update", "2"});
  const CommandResult trained = run_attnlab(dir, args);
  require_success(trained);
  CHECK(contains(trained.out, "done training (reached --max-update 2)"));
  require_success(run_attnlab(dir, {"validate", "fairseq-bin", "--path", "checkpoints/checkpoint_last",
                                    "--max-tokens", "512", "--threads", "1"}));
  const CommandResult generated = run_attnlab(dir, {"generate", "fairseq-bin", "--path", "checkpoints/checkpoint_last",
                                                    "--gen-subset", "valid", "--beam", "2", "--threads", "1"});
  require_success(generated);
  // S- is the source read back from fairseq's ids: the text fairseq-preprocess was given.
  const std::vector<std::string> sources = lines_of(read_file(vector_path("own/fairseq/data-bin-text/valid.en")));
  CHECK(contains(generated.out, "S-0\t" + sources[0] + "\n"));
  CHECK(contains(generated.out, "S-19\t" + sources[19] + "\n"));
  CHECK(contains(generated.out, "H-19\t"));
  // The same splits in fairseq's older lazy/cached format: the same ids, so the same output.
  fs::copy(vector_path("own/fairseq/data-bin-lazy"), dir.dir / "fairseq-lazy-bin");
  const CommandResult from_lazy = run_attnlab(dir, {"generate", "fairseq-lazy-bin", "--path",
                                                    "checkpoints/checkpoint_last", "--gen-subset", "valid", "--beam",
                                                    "2", "--threads", "1"});
  require_success(from_lazy);
  CHECK(from_lazy.out == generated.out);
  // The same sources binarized alone (fairseq's back-translation recipe: preprocess --only-source,
  // the target dictionary copied beside): the same lines, without T- and the BLEU line.
  require_success(
      run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--only-source", "--srcdict", "fairseq-bin/dict.en.txt",
                        "--testpref", vector_path("own/fairseq/data-bin-text/valid"), "--destdir", "mono"}));
  fs::copy_file(dir.dir / "fairseq-bin" / "dict.de.txt", dir.dir / "mono" / "dict.de.txt");
  const CommandResult monolingual = run_attnlab(dir, {"generate", "mono", "--path", "checkpoints/checkpoint_last",
                                                      "--gen-subset", "test", "--beam", "2", "--threads", "1"});
  require_success(monolingual);
  std::string without_references;
  for (const std::string& line : lines_of(generated.out))
    if (!line.starts_with("T-") && !line.starts_with("Generate ")) without_references += line + "\n";
  CHECK(monolingual.out == without_references);
  require_runtime_error(run_attnlab(dir, {"validate", "mono", "--path", "checkpoints/checkpoint_last", "--valid-subset",
                                          "test", "--threads", "1"}),
                        {"test.en-de.de.bin", "only its source side (preprocess --only-source)"});
  require_runtime_error(run_attnlab(dir, {"generate", "mono", "--path", "checkpoints/checkpoint_last", "--gen-subset",
                                          "test", "--score-reference", "--threads", "1"}),
                        {"has no target side", "--score-reference"});

  // fairseq's files do not name their dictionary: a smaller one is caught by the ids it lacks.
  write_file(dir.dir / "fairseq-bin" / "dict.de.txt", "a 1\n");
  const CommandResult other_dictionary = run_attnlab(dir, args);
  CHECK(other_dictionary.exit_code != 0);
  CHECK(contains(other_dictionary.err, "train.en-de.de.bin holds id "));
  CHECK(contains(other_dictionary.err, "dict.de.txt has only 5 symbols"));
}

TEST_CASE("score prints sacreBLEU's line, and BLEU 100 for a file against itself") {
  TempDir dir;
  const nlohmann::json expected =
      nlohmann::json::parse(read_file(vector_path("own/bleu/sacrebleu_corpus_expected.json")));
  const std::string hypotheses = vector_path("own/bleu/hyp.txt"), references = vector_path("own/bleu/ref.txt");
  const CommandResult scored = run_attnlab(dir, {"score", "-r", references}, hypotheses);
  require_success(scored);
  CHECK(scored.out == expected["corpus"]["default_13a_exp"]["formatted_w1"].get<std::string>() + "\n");

  const CommandResult itself = run_attnlab(dir, {"score", "-r", references}, references);
  require_success(itself);
  CHECK(contains(itself.out, " = 100.0 100.0/100.0/100.0/100.0 "));
  const CommandResult fairseq = run_attnlab(dir, {"score", "--format", "fairseq", "-r", references}, references);
  require_success(fairseq);
  CHECK(fairseq.out.starts_with("BLEU4 = 100.00, 100.0/100.0/100.0/100.0 "));
  // fairseq-score's -o and --sentence-bleu: N lines numbered from 0; sacreBLEU has neither.
  const CommandResult sentences =
      run_attnlab(dir, {"score", "--format", "fairseq", "-r", references, "--sentence-bleu", "-o", "2"}, references);
  require_success(sentences);
  const std::vector<std::string> lines = lines_of(sentences.out);
  CHECK(lines.size() == lines_of(read_file(references)).size());
  CHECK(lines.back().starts_with(std::to_string(lines.size() - 1) + " BLEU2 = 100.00, 100.0/100.0 "));
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-o", "2"}, references),
                        {"-o", "--format fairseq only"});
}

// Expected: sacreBLEU 2.6.0's command line on the same files (its default -f json; -f text -b, -sh).
TEST_CASE("score --json, --score-only and --short print what sacreBLEU's command line prints") {
  TempDir dir;
  const std::string hypotheses = vector_path("own/bleu/hyp.txt"), references = vector_path("own/bleu/ref.txt");
  const std::string verbose = "85.6/69.4/58.8/53.0 (BP = 0.897 ratio = 0.902 hyp_len = 2903 ref_len = 3218)";
  const std::string fields = " \"case\": \"mixed\",\n \"eff\": \"no\",\n \"tok\": \"13a\",\n \"smooth\": \"exp\",\n"
                             " \"version\": \"2.6.0\"\n}\n";
  const CommandResult json = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--json"});
  require_success(json);
  CHECK(json.out == "{\n \"name\": \"BLEU\",\n \"score\": 58.8,\n"
                    " \"signature\": \"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\",\n"
                    " \"verbose_score\": \"" + verbose + "\",\n \"nrefs\": \"1\",\n" + fields);
  const CommandResult confident =
      run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--json", "--confidence", "-w", "2"});
  require_success(confident);
  CHECK(confident.out ==
        "{\n \"name\": \"BLEU\",\n \"score\": 58.84,\n"
        " \"signature\": \"nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\",\n"
        " \"confidence_mean\": 58.84,\n \"confidence_var\": 3.94,\n \"confidence\": \"μ = 58.84 ± 3.94\",\n"
        " \"verbose_score\": \"" + verbose + "\",\n \"nrefs\": \"1\",\n \"bs\": \"1000\",\n \"seed\": \"12345\",\n" +
        fields);
  const CommandResult score_only = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-b"});
  require_success(score_only);
  CHECK(score_only.out == "58.8\n");
  const CommandResult short_signature = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--short"});
  require_success(short_signature);
  CHECK(short_signature.out == "BLEU|#:1|c:mixed|e:no|tok:13a|s:exp|v:2.6.0 = 58.8 " + verbose + "\n");
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--json", "--sentence"}),
                        {"--json prints one system's corpus score"});
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--json", "-b"}),
                        {"leave out --score-only and --short"});
  require_runtime_error(
      run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--json", "--format", "multi-bleu"}),
      {"--json applies to --format sacrebleu only"});
}

// Expected: sacreBLEU 2.6.0's command line on the same files (-m bleu chrf -f text; -m chrf -cw 2).
TEST_CASE("score -m chrf prints sacreBLEU's chrF and chrF++ lines, next to BLEU's when both are asked") {
  TempDir dir;
  const std::string hypotheses = vector_path("own/bleu/hyp.txt"), references = vector_path("own/bleu/ref.txt");
  const CommandResult both = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "chrf", "bleu"});
  require_success(both);
  CHECK(both.out == "  BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 58.8 85.6/69.4/58.8/53.0 "
                    "(BP = 0.897 ratio = 0.902 hyp_len = 2903 ref_len = 3218)\n"
                    "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = 75.1\n");
  const CommandResult json =
      run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "chrf", "--chrf-word-order", "2", "--json"});
  require_success(json);
  CHECK(json.out == "{\n \"name\": \"chrF2++\",\n \"score\": 74.0,\n"
                    " \"signature\": \"nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0\",\n"
                    " \"nrefs\": \"1\",\n \"case\": \"mixed\",\n \"eff\": \"yes\",\n \"nc\": \"6\",\n \"nw\": \"2\",\n"
                    " \"space\": \"no\",\n \"version\": \"2.6.0\"\n}\n");
  const CommandResult score_only = run_attnlab(
      dir, {"score", "-r", references, "-i", hypotheses, "-m", "chrf", "--chrf-word-order", "2", "-w", "2", "-b"});
  require_success(score_only);
  CHECK(score_only.out == "73.98\n");
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "chrf", "--confidence"}),
                        {"chrF has no --paired-bs, --paired-ar or --confidence"});
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--chrf-word-order", "2"}),
                        {"--chrf-word-order applies to -m chrf"});
}

// Expected: sacreBLEU 2.6.0's command line on the same files (-m ter chrf bleu -f text, the other
// flags as named; --json as its default -f json).
TEST_CASE("score -m ter prints sacreBLEU's TER lines, beside BLEU's and chrF's when asked") {
  TempDir dir;
  const std::string hypotheses = vector_path("own/bleu/hyp.txt"), references = vector_path("own/bleu/ref.txt");
  const CommandResult all =
      run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "ter", "chrf", "bleu"});
  require_success(all);
  CHECK(all.out == "        BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 58.8 85.6/69.4/58.8/53.0 "
                   "(BP = 0.897 ratio = 0.902 hyp_len = 2903 ref_len = 3218)\n"
                   "      chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = 75.1\n"
                   "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0 = 25.9\n");
  const CommandResult json = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "ter",
                                               "--ter-normalized", "--ter-asian-support", "--json"});
  require_success(json);
  CHECK(json.out == "{\n \"name\": \"TER\",\n \"score\": 25.1,\n"
                    " \"signature\": \"nrefs:1|case:lc|tok:tercom|norm:yes|punct:yes|asian:yes|version:2.6.0\",\n"
                    " \"nrefs\": \"1\",\n \"case\": \"lc\",\n \"tok\": \"tercom\",\n \"norm\": \"yes\",\n"
                    " \"punct\": \"yes\",\n \"asian\": \"yes\",\n \"version\": \"2.6.0\"\n}\n");
  const CommandResult score_only = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "ter",
                                                     "--ter-no-punct", "--ter-case-sensitive", "-w", "2", "-b"});
  require_success(score_only);
  CHECK(score_only.out == "26.54\n");
  const CommandResult short_signature =
      run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "ter", "--short"});
  require_success(short_signature);
  CHECK(short_signature.out == "TER|#:1|c:lc|t:tercom|nr:no|pn:yes|as:no|v:2.6.0 = 25.9\n");
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "ter", "--confidence"}),
                        {"TER has no --paired-bs, --paired-ar or --confidence"});
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--ter-normalized"}),
                        {"--ter-normalized applies to -m ter"});
  require_runtime_error(
      run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "-m", "ter", "--format", "multi-bleu"}),
      {"-m ter is sacreBLEU's"});
}

TEST_CASE("score -m ter --sentence prints each hypothesis's TER against its references") {
  TempDir dir;
  write_file(dir.file("hyp"), "a cat sat mat on the\nMüller's. House\n\n我们的猫。\n");
  write_file(dir.file("ref1"), "the cat sat on the mat\nMüller's. House\nsomething\n我们 的 猫\n");
  write_file(dir.file("ref2"), "The cat sat on the mat.\nMuller's house\n\n我们的狗\n");
  const std::string line = "TER|nrefs:1|case:lc|tok:tercom|norm:yes|punct:yes|asian:yes|version:2.6.0 = ";
  const CommandResult normalized =
      run_attnlab(dir, {"score", "-r", dir.file("ref1"), "-i", dir.file("hyp"), "-m", "ter", "--sentence",
                        "--ter-normalized", "--ter-asian-support", "-w", "2"});
  require_success(normalized);
  CHECK(normalized.out == line + "33.33\n" + line + "50.00\n" + line + "100.00\n" + line + "25.00\n");
  const std::vector<std::string> both = {"score", "-r", dir.file("ref1"), "-r", dir.file("ref2"), "-i", dir.file("hyp")};
  std::vector<std::string> args = both;
  args.insert(args.end(), {"-m", "ter", "--sentence", "-b"});
  const CommandResult two_references = run_attnlab(dir, args);
  require_success(two_references);
  CHECK(two_references.out == "33.3\n0.0\n0.0\n50.0\n");
  args = both;
  args.insert(args.end(), {"-m", "ter", "chrf", "--ter-no-punct", "-w", "3", "-b"});
  const CommandResult with_chrf = run_attnlab(dir, args);
  require_success(with_chrf);
  CHECK(with_chrf.out == "64.695\n28.571\n");
  require_runtime_error(run_attnlab(dir, {"score", "-r", dir.file("ref1"), "-i", dir.file("hyp"), "-m", "ter", "bleu",
                                          "--sentence"}),
                        {"--sentence scores one metric"});
}

TEST_CASE("score --paired-bs compares -i systems with the first by sacreBLEU's paired bootstrap") {
  TempDir dir;
  const std::string hypotheses = vector_path("own/bleu/hyp.txt"), references = vector_path("own/bleu/ref.txt");
  const std::vector<std::string> args = {"score", "-r", references, "-i", hypotheses, references, "--paired-bs"};
  const CommandResult compared = run_attnlab(dir, args);
  require_success(compared);
  const std::vector<std::string> lines = lines_of(compared.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].starts_with("System "));
  CHECK(contains(lines[0], "BLEU (μ ± 95% CI)"));
  CHECK(lines[1].starts_with("Baseline: " + hypotheses + "  "));
  // The references scored against themselves: 100 in every resample, and no resample comes
  // near the baseline: p = 1/1001, the smallest 1,000 resamples can give.
  CHECK(lines[2] == fmt::format("{:<{}}  100.0 (100.0 ± 0.0) (p = 0.0010)*", references, lines[0].find("  BLEU")));
  CHECK(lines[3] == "BLEU|nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  // The baseline's score is its corpus BLEU, whose line `score` prints for stdin.
  const CommandResult alone = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses});
  require_success(alone);
  const std::string corpus_bleu = alone.out.substr(alone.out.find(" = ") + 3, 4);
  CHECK(lines[1].substr(lines[0].find("  BLEU") + 2).starts_with(corpus_bleu + " ("));

  setenv("SACREBLEU_SEED", "7", 1);
  const CommandResult reseeded = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, references,
                                                   "--paired-bs", "--paired-bs-n", "100"});
  setenv("SACREBLEU_SEED", "seven", 1);
  const CommandResult bad_seed = run_attnlab(dir, args);
  unsetenv("SACREBLEU_SEED");
  require_success(reseeded);
  CHECK(contains(reseeded.out, "(p = 0.0099)*"));  // 1/101
  CHECK(contains(reseeded.out, "BLEU|nrefs:1|bs:100|seed:7|"));
  require_runtime_error(bad_seed, {"SACREBLEU_SEED=seven: expected an integer in [0, 4294967295] or none"});

  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, references}),
                        {"2 systems given with -i: compare them with --paired-bs"});
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--paired-bs"}),
                        {"--paired-bs compares systems"});
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, references, "--paired-bs",
                                          "--format", "multi-bleu"}),
                        {"--paired-bs applies to --format sacrebleu only"});

  // --confidence: one system's line with the baseline's mean and interval of the table above.
  const CommandResult confident = run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--confidence"});
  require_success(confident);
  const std::string baseline_cell = lines[1].substr(lines[0].find("  BLEU") + 2);  // "58.8 (58.8 ± 3.9)"
  const std::string mean_and_ci = baseline_cell.substr(baseline_cell.find('(') + 1);
  const std::string signature = "BLEU|nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0";
  CHECK(confident.out.starts_with(signature + " = " + corpus_bleu + " (μ = " + mean_and_ci + " "));
  // One resample is none, as in sacreBLEU (it resamples for counts above 1): the plain line.
  const CommandResult once =
      run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--confidence", "--confidence-n", "1"});
  require_success(once);
  CHECK(once.out == alone.out);
  require_runtime_error(run_attnlab(dir, {"score", "-r", references, "-i", hypotheses, "--confidence", "--sentence"}),
                        {"--paired-bs, --paired-ar and --confidence test a corpus, not --sentence"});
}

TEST_CASE("score --paired-ar compares -i systems with the first by sacreBLEU's approximate randomization") {
  TempDir dir;
  // Tokenized text scored with -t none, so that a transcription of sacreBLEU's _paired_ar_test
  // run with NumPy 1.24 (splitting on whitespace) gave the p-values: 2282 of 10,000 trials and
  // 224 of 1,000 differ by more than the real difference.
  const std::string baseline = vector_path("own/bleu/hyp.tok"), system = vector_path("own/bleu/ref2.tok");
  const std::vector<std::string> args = {"score", "-r", vector_path("own/bleu/ref.tok"), "-t", "none", "-i", baseline,
                                         system, "--paired-ar"};
  const CommandResult compared = run_attnlab(dir, args);
  require_success(compared);
  const std::vector<std::string> lines = lines_of(compared.out);
  REQUIRE(lines.size() == 4);
  const size_t name_width = ("Baseline: " + baseline).size();
  CHECK(lines[0] == fmt::format("{:<{}}  BLEU", "System", name_width));  // no mean or interval
  CHECK(lines[1] == fmt::format("Baseline: {}  58.1", baseline));
  CHECK(lines[2] == fmt::format("{:<{}}  61.1 (p = 0.2283)", system, name_width));  // 2283/10001: no '*'
  CHECK(lines[3] == "BLEU|nrefs:1|ar:10000|seed:12345|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0");

  std::vector<std::string> fewer = args;
  fewer.insert(fewer.end(), {"--paired-ar-n", "1000", "-w", "2"});
  setenv("SACREBLEU_SEED", "none", 1);
  const CommandResult unseeded = run_attnlab(dir, fewer);
  unsetenv("SACREBLEU_SEED");
  require_success(unseeded);
  CHECK(contains(unseeded.out, "BLEU|nrefs:1|ar:1000|seed:none|"));
  const CommandResult thousand = run_attnlab(dir, fewer);
  require_success(thousand);
  CHECK(contains(thousand.out, fmt::format("{:<{}}  61.12 (p = 0.2248)\n", system, name_width)));  // 225/1001
  CHECK(contains(thousand.out, "BLEU|nrefs:1|ar:1000|seed:12345|"));
  // The baseline against itself: no trial exceeds the difference 0, so sacreBLEU's strict count
  // gives the smallest p, marked.
  const CommandResult itself =
      run_attnlab(dir, {"score", "-r", system, "-i", baseline, baseline, "--paired-ar", "--paired-ar-n", "99"});
  require_success(itself);
  CHECK(contains(itself.out, " (p = 0.0100)*\n"));

  require_runtime_error(run_attnlab(dir, {"score", "-r", system, "-i", baseline, "--paired-ar"}),
                        {"--paired-ar compares systems: give the baseline and at least one system with -i"});
  require_runtime_error(run_attnlab(dir, {"score", "-r", system, "-i", baseline, system, "--paired-ar", "--paired-bs"}),
                        {"--paired-bs and --paired-ar are two tests of the same question: choose one"});
  require_runtime_error(
      run_attnlab(dir, {"score", "-r", system, "-i", baseline, system, "--paired-ar", "--confidence"}),
      {"--confidence is for one system"});
  require_runtime_error(run_attnlab(dir, {"score", "-r", system, "-i", baseline, system, "--paired-ar", "--sentence"}),
                        {"not --sentence"});
  require_runtime_error(
      run_attnlab(dir, {"score", "-r", system, "-i", baseline, system, "--paired-ar", "--format", "fairseq"}),
      {"--paired-ar applies to --format sacrebleu only"});
  require_command_line_error(run_attnlab(dir, {"score", "-r", system, "-i", baseline, system, "--paired-ar",
                                                "--paired-ar-n", "0"}),
                             "--paired-ar-n");
}

// --- training and decoding ----------------------------------------------------------------

TEST_CASE("train logs every update and validation and writes fairseq's checkpoints") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const std::string& log = workspace.training.out;
  INFO(log);
  CHECK(std::regex_search(log, std::regex(R"(epoch 001 \| update 1 \| loss [0-9.]+ \| nll_loss [0-9.]+ \| ppl )")));
  CHECK(std::regex_search(log, std::regex(R"(epoch 001 \| valid on 'valid' subset \| loss [0-9.]+ )")));
  CHECK(std::regex_search(log, std::regex(R"(epoch 002 \| valid on 'valid' subset \| loss [0-9.]+ )")));
  CHECK(contains(log, "done training (reached --max-epoch 2)"));
  for (const char* name : {"checkpoint1", "checkpoint2", "checkpoint_last", "checkpoint_best"})
    for (const char* extension : {".safetensors", ".json"}) {
      INFO(name << extension);
      CHECK(fs::exists(workspace.dir.dir / "checkpoints" / (std::string(name) + extension)));
    }
}

TEST_CASE("train --valid-subset validates on each split, the first one picking the best; a missing one stops it first") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  std::vector<std::string> args = tiny_training_args("data-bin", "subsets");
  args.insert(args.end(), {"--valid-subset", "valid,test", "--max-epoch", "1", "--validate-interval-updates", "1"});
  const CommandResult trained = run_attnlab(workspace.dir, args);
  require_success(trained);
  INFO(trained.out);
  CHECK(std::regex_search(trained.out, std::regex(R"(\nvalid at update 1 \| loss [0-9.]+ )")));
  CHECK(std::regex_search(trained.out, std::regex(R"(\nvalid on 'test' subset at update 1 \| loss [0-9.]+ )")));
  CHECK(std::regex_search(trained.out,
                          std::regex(R"(epoch 001 \| valid on 'valid' subset \| loss [0-9.]+ .* \| best_loss [0-9.]+)")));
  std::smatch test_line;
  REQUIRE(std::regex_search(trained.out, test_line,
                            std::regex(R"(epoch 001 \| valid on 'test' subset (\| loss [0-9.]+ \| nll_loss [0-9.]+ \| ppl [0-9.]+) \| num_updates [0-9]+\n)")));
  CHECK_FALSE(contains(test_line.str(), "best_loss"));  // the best is the first subset's alone
  // The test line is the loss validate measures on that split with the saved weights.
  const CommandResult validated =
      run_attnlab(workspace.dir, {"validate", "data-bin", "--path", "subsets/checkpoint1", "--subset", "test",
                                  "--max-tokens", "512", "--threads", "1"});
  require_success(validated);
  CHECK(contains(validated.out, "valid on 'test' subset " + test_line[1].str()));
  // fairseq-validate's list: each split's line, in order; a missing one stops before any line.
  const CommandResult both = run_attnlab(workspace.dir, {"validate", "data-bin", "--path", "subsets/checkpoint1",
                                                          "--valid-subset", "valid,test", "--max-tokens", "512",
                                                          "--threads", "1"});
  require_success(both);
  CHECK(both.out.find("valid on 'valid' subset") < both.out.find("valid on 'test' subset " + test_line[1].str()));
  const CommandResult missing_split = run_attnlab(
      workspace.dir, {"validate", "data-bin", "--path", "subsets/checkpoint1", "--valid-subset", "valid,valid9"});
  require_runtime_error(missing_split, {"valid9"});
  CHECK(missing_split.out.empty());
  CHECK(contains(read_file(workspace.dir.file("subsets/train_log.jsonl")), "\"subset\":\"test\""));

  // A split that is not there, or an empty name, stops the run before any training or file.
  std::vector<std::string> missing = tiny_training_args("data-bin", "subsets-missing");
  missing.insert(missing.end(), {"--valid-subset", "valid,valid1", "--max-epoch", "1"});
  require_runtime_error(run_attnlab(workspace.dir, missing), {"valid1.en-de.en.bin", "cannot open"});
  CHECK_FALSE(fs::exists(workspace.dir.dir / "subsets-missing"));
  missing[missing.size() - 3] = "valid,";
  require_runtime_error(run_attnlab(workspace.dir, missing), {"--valid-subset: an empty split name in 'valid,'"});
}

TEST_CASE("train without a valid split stops at the start, or trains with --disable-validation and no checkpoint_best") {
  TempDir dir;
  fs::create_directories(dir.dir / "no-valid");
  for (const auto& entry : fs::directory_iterator(vector_path("own/fairseq/data-bin")))
    if (entry.path().filename().string().rfind("valid.", 0) != 0)
      fs::copy_file(entry.path(), dir.dir / "no-valid" / entry.path().filename());
  std::vector<std::string> args = tiny_training_args("no-valid", "checkpoints");
  args.erase(std::find(args.begin(), args.end(), "--share-all-embeddings"));  // one dictionary per language
  args.insert(args.end(), {"--max-epoch", "1"});
  require_runtime_error(run_attnlab(dir, args), {"valid.en-de.en.bin", "cannot open"});
  CHECK_FALSE(fs::exists(dir.dir / "checkpoints"));

  args.push_back("--disable-validation");
  const CommandResult trained = run_attnlab(dir, args);
  require_success(trained);
  CHECK_FALSE(contains(trained.out, "valid on"));
  for (const char* name : {"checkpoint1", "checkpoint_last"})
    CHECK(fs::exists(dir.file(std::string("checkpoints/") + name + ".json")));
  CHECK_FALSE(fs::exists(dir.file("checkpoints/checkpoint_best.json")));
  // It resumes from checkpoint_last into the next epoch.
  args[args.size() - 2] = "2";
  const CommandResult resumed = run_attnlab(dir, args);
  require_success(resumed);
  CHECK(contains(resumed.out, "done training (reached --max-epoch 2)"));
  CHECK(fs::exists(dir.file("checkpoints/checkpoint2.json")));
}

TEST_CASE("train combines train1, ... with train as fairseq does, --upsample-primary repeating it; the other direction's "
          "files are read") {
  TempDir dir;
  const fs::path data = dir.dir / "combined";
  fs::copy(vector_path("own/fairseq/data-bin"), data);
  for (const char* file : {"en-de.en.bin", "en-de.en.idx", "en-de.de.bin", "en-de.de.idx"})
    fs::copy_file(data / (std::string("valid.") + file), data / (std::string("train1.") + file));
  const size_t train_pairs = attn::data::BinarizedCorpus::open((data / "train.en-de.en.bin").string()).size();
  const size_t extra_pairs = attn::data::BinarizedCorpus::open((data / "train1.en-de.en.bin").string()).size();
  const CommandResult combined =
      run_attnlab(dir, {"train", data.string(), "--arch", "transformer_tiny", "--threads", "1", "--no-progress-bar",
                        "--max-tokens", "2048", "--max-epoch", "1", "--upsample-primary", "2"});
  require_success(combined);
  INFO(combined.out);
  CHECK(contains(combined.out, fmt::format("training on {} pairs: {} (×2) + {}\n", 2 * train_pairs + extra_pairs,
                                           (data / "train.en-de.en.bin").string(),
                                           (data / "train1.en-de.en.bin").string())));
  // --upsample-primary counts only when there is something to combine with.
  const CommandResult alone = train_on_fairseq_bin(
      dir, {"--max-tokens", "2048", "--max-epoch", "1", "--upsample-primary", "2", "--save-dir", "alone"});
  require_success(alone);
  CHECK_FALSE(contains(alone.out, "training on"));
  require_command_line_error(train_on_fairseq_bin(dir, {"--max-tokens", "2048", "--upsample-primary", "0"}),
                             "--upsample-primary");

  // German to English from the files binarized as en-de (train.en-de.de.bin, ...), as fairseq finds them.
  const CommandResult reversed = train_on_fairseq_bin(
      dir, {"-s", "de", "-t", "en", "--max-tokens", "2048", "--max-update", "2", "--save-dir", "de-en"});
  require_success(reversed);
  CHECK(contains(reversed.out, "num_updates 2 | best_loss"));
  const CommandResult translated = run_attnlab(
      dir, {"generate", vector_path("own/fairseq/data-bin"), "--path", "de-en/checkpoint_last", "--subset", "valid",
            "--max-len-b", "3", "--threads", "1"});
  require_success(translated);
  // Its sources are the German side.
  const attn::data::Dictionary german = attn::data::Dictionary::load(vector_path("own/fairseq/data-bin/dict.de.txt"));
  std::vector<std::string> words;
  for (const int64_t id : attn::data::BinarizedCorpus::open(vector_path("own/fairseq/data-bin/valid.en-de.de.bin")).sentence(0))
    if (id != attn::data::Dictionary::kEos) words.push_back(german.symbol(int32_t(id)));
  CHECK(contains(translated.out, fmt::format("S-0\t{}\n", fmt::join(words, " "))));
}

TEST_CASE("train DIR1:DIR2 trains each epoch on the next dir's split, as fairseq, and resumes exactly across them") {
  TempDir dir;
  const fs::path first = dir.dir / "shard0", second = dir.dir / "shard1";
  fs::copy(vector_path("own/fairseq/data-bin"), first);
  fs::copy(first, second);
  for (const char* file : {"en-de.en.bin", "en-de.en.idx", "en-de.de.bin", "en-de.de.idx"})  // 20 pairs in shard1
    fs::copy_file(first / (std::string("valid.") + file), second / (std::string("train.") + file),
                  fs::copy_options::overwrite_existing);
  auto train = [&](const std::string& save_dir, std::vector<std::string> stop) {
    std::vector<std::string> args = {"train", "shard0:shard1", "--arch", "transformer_tiny", "--threads", "1",
                                     "--no-progress-bar", "--max-tokens", "512", "--lr", "0.0005", "--save-dir",
                                     save_dir};
    args.insert(args.end(), stop.begin(), stop.end());
    return run_attnlab(dir, args);
  };
  const CommandResult straight = train("straight", {"--max-epoch", "3"});
  require_success(straight);
  INFO(straight.out);
  for (const auto& [epoch, shard, pairs] : {std::tuple{1, "shard0", 150}, {2, "shard1", 20}, {3, "shard0", 150}})
    CHECK(contains(straight.out, fmt::format("epoch {:03d} | training on {} pairs: {}", epoch, pairs,
                                             (dir.dir / shard / "train.en-de.en.bin").string())));
  // Stopped inside the second epoch (the first has 11 updates) and resumed: the same weights.
  require_success(train("resumed", {"--max-update", "12"}));
  require_success(train("resumed", {"--max-epoch", "3"}));
  for (const char* file : {"checkpoint_last.safetensors", "checkpoint_last.optimizer.safetensors"})
    CHECK(read_file(dir.file(std::string("resumed/") + file)) == read_file(dir.file(std::string("straight/") + file)));

  // A dir binarized with other dictionaries, or an empty name in the list, stops the run first.
  write_file((second / "dict.en.txt").string(), read_file((first / "dict.en.txt").string()) + "extra 1\n");
  require_runtime_error(train("other-dict", {"--max-epoch", "1"}), {"dict.en.txt differs from"});
  require_runtime_error(run_attnlab(dir, {"train", "shard0::shard1", "--max-tokens", "512"}), {"an empty data dir"});
  CHECK_FALSE(fs::exists(dir.dir / "other-dict"));
}

TEST_CASE("train takes fairseq-train's other flag names as what they mean here, or says why not") {
  TempDir dir;
  const std::string data = vector_path("own/fairseq/data-bin");  // 150 training pairs
  auto updates_in_epoch_one = [&](const std::string& save_dir, std::vector<std::string> flags) {
    flags.insert(flags.end(), {"--save-dir", save_dir, "--max-epoch", "1"});
    const CommandResult trained = train_on_fairseq_bin(dir, flags);
    require_success(trained);
    std::smatch count;
    REQUIRE(std::regex_search(trained.out, count,
                              std::regex(R"(epoch 001 \| valid on 'valid' subset .* \| num_updates ([0-9]+))")));
    return std::make_pair(std::stoi(count[1].str()), trained.out);
  };
  // --required-batch-size-multiple 8 cuts batches of 12 sentences down to 8: 19 updates, not 13.
  const std::vector<std::string> batches = {"--max-tokens", "100000", "--max-sentences", "12", "--task",
                                            "translation", "--num-workers", "2"};
  CHECK(updates_in_epoch_one("twelve", batches).first == 13);
  std::vector<std::string> multiple = batches;
  multiple.insert(multiple.end(), {"--required-batch-size-multiple", "8", "--max-tokens-valid", "30",
                                   "--skip-invalid-size-inputs-valid-test", "--criterion", "cross_entropy",
                                   "--log-format", "simple", "--cpu"});
  const auto [updates, out] = updates_in_epoch_one("eight", multiple);
  CHECK(updates == 19);
  // Validation batches of at most 30 tokens leave out the longer pairs, said once.
  CHECK(contains(out, "warning: valid on 'valid' subset | 13 pairs skipped (13 alone longer than max tokens 30)"));

  const std::vector<std::string> base = {"train", data, "--max-tokens", "512", "--save-dir", "refused"};
  auto refused = [&](std::vector<std::string> flags, std::vector<std::string> names) {
    flags.insert(flags.begin(), base.begin(), base.end());
    require_runtime_error(run_attnlab(dir, flags), names);
  };
  refused({"--fp16"}, {"--fp16", "--matmul-precision bf16"});
  refused({"--criterion", "cross_entropy", "--label-smoothing", "0.1"}, {"--criterion cross_entropy has none"});
  refused({"--log-format", "json"}, {"train_log.jsonl"});
  refused({"--cpu", "--device", "cuda"}, {"--cpu and --device cuda"});
  refused({"--train-subset", "train1"}, {"train1.en-de.en.bin"});
  require_command_line_error(run_attnlab(dir, {"train", data, "--max-tokens", "512", "--task", "language_modeling"}),
                             "--task");
  CHECK_FALSE(fs::exists(dir.dir / "refused" / "checkpoint_last.json"));
}

TEST_CASE("train --validate-interval, --save-interval and --validate-after-updates decide when to validate and save") {
  TempDir dir;
  const CommandResult trained = train_on_fairseq_bin(
      dir, {"--max-tokens", "2048", "--max-epoch", "3", "--validate-interval", "2", "--save-interval", "2"});
  require_success(trained);
  INFO(trained.out);
  CHECK_FALSE(contains(trained.out, "epoch 001 | valid"));
  CHECK(contains(trained.out, "epoch 002 | valid on 'valid' subset"));
  CHECK(contains(trained.out, "epoch 003 | valid on 'valid' subset"));  // the last epoch: the run's end
  CHECK_FALSE(fs::exists(dir.file("checkpoints/checkpoint1.json")));
  for (const char* name : {"checkpoint2", "checkpoint3", "checkpoint_last", "checkpoint_best"})
    CHECK(fs::exists(dir.file(std::string("checkpoints/") + name + ".json")));

  // --validate-after-updates: nothing validated before update 4, nor saved at the interval.
  const CommandResult late = train_on_fairseq_bin(dir, {"--max-tokens", "512", "--max-update", "6",
                                                        "--save-interval-updates", "2", "--validate-after-updates",
                                                        "4", "--save-dir", "late"});
  require_success(late);
  CHECK_FALSE(contains(late.out, "num_updates 2 "));
  CHECK(contains(late.out, "num_updates 4 | best_loss"));
  CHECK_FALSE(fs::exists(dir.file("late/checkpoint_1_2.json")));
  CHECK(fs::exists(dir.file("late/checkpoint_1_4.json")));
  const CommandResult never = train_on_fairseq_bin(
      dir, {"--max-tokens", "512", "--max-update", "3", "--validate-after-updates", "100", "--save-dir", "never"});
  require_success(never);
  CHECK_FALSE(contains(never.out, "valid on"));
  CHECK(fs::exists(dir.file("never/checkpoint_last.json")));
  CHECK_FALSE(fs::exists(dir.file("never/checkpoint_best.json")));
}

TEST_CASE("train --log-file copies the progress lines; --no-last-checkpoints resumes from the newest; --no-save saves none") {
  TempDir dir;
  std::vector<std::string> args = {"--max-tokens", "2048", "--log-file",  "run.log", "--no-last-checkpoints",
                                   "--tensorboard-logdir", "tb", "--log-interval", "1", "--max-epoch", "1"};
  require_success(train_on_fairseq_bin(dir, args));
  CHECK(contains(read_file(dir.file("run.log")), "epoch 001 | valid on 'valid' subset"));
  CHECK(fs::exists(dir.file("checkpoints/checkpoint1.json")));
  CHECK_FALSE(fs::exists(dir.file("checkpoints/checkpoint_last.json")));
  args.back() = "2";
  const CommandResult resumed = train_on_fairseq_bin(dir, args);
  require_success(resumed);
  CHECK(contains(resumed.out, "checkpoint1"));  // where it resumed from
  CHECK(fs::exists(dir.file("checkpoints/checkpoint2.json")));
  const std::string log = read_file(dir.file("run.log"));  // appended to, as fairseq's log file is
  CHECK(contains(log, "epoch 001 | valid on 'valid' subset"));
  CHECK(contains(log, "epoch 002 | valid on 'valid' subset"));
  // --tensorboard-logdir: an event file per run and process (the resumed one beside the first),
  // each a TFRecord whose first record is the file version and whose scalars have fairseq's names.
  for (const auto& [run, tags] : std::map<std::string, std::vector<std::string>>{
           {"train_inner", {"loss", "nll_loss", "ppl", "lr", "gnorm", "wps", "wpb", "bsz", "ups", "train_wall", "wall"}},
           {"valid", {"loss", "nll_loss", "ppl", "best_loss", "wall"}}}) {
    INFO(run);
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir.dir / "tb" / run)) files.push_back(entry.path());
    REQUIRE(files.size() == 2);
    for (const fs::path& file : files) {
      CHECK(file.filename().string().starts_with("events.out.tfevents."));
      const std::string bytes = read_file(file);
      REQUIRE(bytes.size() > 12);
      CHECK(attn::data::load_little_endian<uint32_t>(bytes.data() + 8) ==
            attn::app::masked_crc32c(std::string_view(bytes).substr(0, 8)));
      CHECK(contains(bytes, "brain.Event:2"));
      CHECK(contains(bytes, "sys.argv/text_summary"));
      for (const std::string& tag : tags) CHECK(contains(bytes, "\n" + std::string(1, char(tag.size())) + tag));
    }
  }

  args = {"--max-tokens", "2048", "--max-epoch", "1", "--no-save", "--save-dir", "unsaved"};
  require_success(train_on_fairseq_bin(dir, args));
  for (const auto& entry : fs::directory_iterator(dir.dir / "unsaved"))
    CHECK(entry.path().filename().string().rfind("checkpoint", 0) != 0);
  args.insert(args.end(), {"--log-file", "no-such-dir/run.log"});
  require_runtime_error(train_on_fairseq_bin(dir, args), {"no-such-dir/run.log"});
  // fairseq's --stop-time-hours and --curriculum; with --clip-norm the records hold fairseq's clip
  // (the percentage of updates clipped: every one under a norm of 1e-6).
  const CommandResult timed =
      train_on_fairseq_bin(dir, {"--max-tokens", "2048", "--stop-time-hours", "0.000001", "--curriculum", "1",
                                 "--clip-norm", "0.000001", "--log-interval", "1", "--save-dir", "timed"});
  require_success(timed);
  CHECK(contains(timed.out, "done training (reached --stop-time-hours 1e-06): 1 updates"));
  const std::vector<std::string> timed_log = lines_of(read_file(dir.file("timed/train_log.jsonl")));
  REQUIRE(timed_log.size() >= 2);
  const nlohmann::json first_record = nlohmann::json::parse(timed_log.front());
  CHECK(first_record.at("type") == "train");
  CHECK(first_record.at("clip") == 100.0);
  CHECK(first_record.at("wpb").get<double>() > first_record.at("bsz").get<double>());
}

TEST_CASE("train validates at every --save-interval-updates save, as fairseq does, and keeps its best there") {
  TempDir dir;
  const CommandResult trained = train_on_fairseq_bin(
      dir, {"--max-tokens", "512", "--lr", "0.0005", "--max-update", "4", "--save-interval-updates", "2"});
  require_success(trained);
  INFO(trained.out);
  // One line for each, the run's end at update 4 included (its save is the interval's).
  for (const int update : {2, 4}) {
    CHECK(count_matches(trained.out, fmt::format(R"(epoch 001 \| valid on 'valid' subset \| loss [0-9.]+ .*\| )"
                                                 R"(num_updates {} \| best_loss [0-9.]+\n)",
                                                 update)) == 1);
  }
  // The loss falls from update 2 to 4: checkpoint_best is the last save's.
  const nlohmann::json best = nlohmann::json::parse(read_file(dir.file("checkpoints/checkpoint_best.json")));
  CHECK(best.at("metadata").at("num_updates") == 4);
  CHECK(fs::exists(dir.file("checkpoints/checkpoint_1_2.json")));
}

TEST_CASE("train tells each validation and writes each save once, as fairseq's one validate_and_save per update") {
  TempDir dir;
  // Every update validated: the epoch's last update is the epoch's line alone, with the best.
  const CommandResult every = train_on_fairseq_bin(
      dir, {"--max-tokens", "1024", "--max-epoch", "1", "--validate-interval-updates", "1", "--save-dir", "every"});
  require_success(every);
  INFO(every.out);
  std::smatch last;
  REQUIRE(std::regex_search(every.out, last, std::regex(R"(epoch 001 \| valid on 'valid' subset .*\| num_updates ([0-9]+) \| best_loss)")));
  const int updates = std::stoi(last[1].str());
  REQUIRE(updates >= 3);
  CHECK(count_matches(every.out, R"((^|\n)valid at update [0-9]+ \|)") == updates - 1);
  CHECK(count_matches(every.out, fmt::format(R"(valid at update {} \|)", updates)) == 0);
  CHECK(count_matches(every.out, "valid on 'valid' subset") == 1);
  CHECK(count_matches(every.out, "saved checkpoint") == 1);  // the epoch's end
  CHECK(contains(every.out, fmt::format("saved checkpoint every/checkpoint1 (epoch 1 @ {} updates, score ", updates)));
  CHECK(contains(every.out, "; also as checkpoint_best, checkpoint_last)"));

  // A save at the run's last update is written once, as that update's checkpoint, with its best.
  const CommandResult stopped = train_on_fairseq_bin(
      dir, {"--max-tokens", "512", "--lr", "0.0005", "--max-update", "4", "--save-interval-updates", "2",
            "--validate-interval-updates", "1", "--keep-best-checkpoints", "1", "--save-dir", "stop"});
  require_success(stopped);
  INFO(stopped.out);
  CHECK(count_matches(stopped.out, R"(saved checkpoint \S+checkpoint_1_2 \(epoch 1 @ 2 updates, score )") == 1);
  CHECK(count_matches(stopped.out, R"(saved checkpoint \S+checkpoint_1_4 \(epoch 1 @ 4 updates, score )") == 1);
  CHECK(count_matches(stopped.out, "saved checkpoint") == 2);
  CHECK(count_matches(stopped.out, R"(num_updates 4 \| best_loss)") == 1);
  CHECK(count_matches(stopped.out, R"(valid at update [0-9]+ \|)") == 2);  // updates 1 and 3
  const nlohmann::json last_save = nlohmann::json::parse(read_file(dir.file("stop/checkpoint_1_4.json")));
  const nlohmann::json newest = nlohmann::json::parse(read_file(dir.file("stop/checkpoint_last.json")));
  CHECK(newest.at("metadata") == last_save.at("metadata"));  // copies of one save: the same record
  CHECK(last_save.at("metadata").at("validated") == true);  // a resume finds the run's end done
  // --keep-best-checkpoints 1: the save of the lower loss, named by it.
  std::vector<double> scores;
  for (const std::string update : {"2", "4"}) {
    std::smatch score;
    REQUIRE(std::regex_search(stopped.out, score, std::regex("@ " + update + R"( updates, score ([0-9.]+)\))")));
    scores.push_back(std::stod(score[1].str()));
  }
  const int best_update = scores[1] < scores[0] ? 4 : 2;
  std::vector<std::string> kept;
  for (const auto& entry : fs::directory_iterator(dir.dir / "stop"))
    if (entry.path().extension() == ".json" && entry.path().stem().string().starts_with("checkpoint.best_"))
      kept.push_back(entry.path().stem().string());
  CHECK(kept == std::vector<std::string>{
                    fmt::format("checkpoint.best_loss_{:.3f}_{}", std::min(scores[0], scores[1]), best_update)});
  const nlohmann::json best = nlohmann::json::parse(read_file(dir.file("stop/checkpoint_best.json")));
  CHECK(best.at("metadata").at("num_updates") == best_update);
  const CommandResult resumed = train_on_fairseq_bin(
      dir, {"--max-tokens", "512", "--lr", "0.0005", "--max-update", "4", "--save-interval-updates", "2", "--save-dir",
            "stop"});
  require_success(resumed);
  CHECK_FALSE(contains(resumed.out, "valid on"));
  CHECK_FALSE(contains(resumed.out, "saved checkpoint"));
}

TEST_CASE("import-fairseq makes a fairseq model.pt an attnlab checkpoint that decodes as the model it came from") {
  TempDir dir;
  const std::string data = vector_path("own/fairseq/data-bin");
  // The layout of fairseq's model archives: model.pt with dict.SRC.txt, dict.TGT.txt (and bpecodes) beside it.
  std::map<std::string, std::string> hypotheses;
  for (const std::string file : {"zip_args", "legacy"}) {
    fs::create_directories(dir.dir / file);
    fs::copy_file(vector_path("own/fairseq/pt/" + file + ".pt"), dir.dir / file / "model.pt");
    for (const char* lang : {"en", "de"})
      fs::copy_file(data + "/dict." + lang + ".txt", dir.dir / file / (std::string("dict.") + lang + ".txt"));
    const CommandResult imported =
        run_attnlab(dir, {"import-fairseq", file + "/model.pt", "--output", "imported/" + file});
    require_success(imported);
    CHECK(contains(imported.out, "(fairseq --arch transformer, 19280 parameters, en -> de)"));
    CHECK(contains(imported.out, "left out (no weights): encoder.version, decoder.version"));
    const CommandResult generated = run_attnlab(
        dir, {"generate", data, "--path", "imported/" + file, "--subset", "valid", "--beam", "2", "--threads", "1"});
    require_success(generated);
    std::istringstream out(generated.out);
    for (std::string line; std::getline(out, line);)
      if (line.starts_with("H-")) hypotheses[file] += line + "\n";
    CHECK_FALSE(hypotheses[file].empty());
  }
  CHECK(hypotheses["zip_args"] == hypotheses["legacy"]);  // the same weights in two layouts

  // A dictionary of another size, and an output that is a training run's checkpoint, are refused.
  require_runtime_error(run_attnlab(dir, {"import-fairseq", "zip_args/model.pt", "--output", "wrong", "--source-dict",
                                          data + "/dict.de.txt"}),
                        {"dict.de.txt", "224 entries", "200 rows"});
  CHECK_FALSE(fs::exists(dir.dir / "wrong.json"));
  const CommandResult trained = train_on_fairseq_bin(dir, {"--max-tokens", "2048", "--max-update", "1"});
  require_success(trained);
  require_runtime_error(
      run_attnlab(dir, {"import-fairseq", "zip_args/model.pt", "--output", "checkpoints/checkpoint_last"}),
      {"checkpoints/checkpoint_last", "optimizer state"});
}

// "P-i\tx y z" lines of `text` by their "P-i", each as its numbers.
std::map<std::string, std::vector<double>> positional_score_lines(const std::string& text) {
  std::map<std::string, std::vector<double>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("P-")) continue;
    std::istringstream numbers(line.substr(line.find('\t') + 1));
    std::vector<double>& scores = lines[line.substr(0, line.find('\t'))];
    for (double x; numbers >> x;) scores.push_back(x);
  }
  return lines;
}

TEST_CASE("models fairseq itself built and saved score every reference token as fairseq does, once imported") {
  TempDir dir;
  const std::string data = vector_path("own/fairseq/data-bin");
  // Each model and the file of fairseq's scores for it (make_fairseq_models.py says what each
  // is): Transformers pre-norm and post-norm; DynamicConv under today's names and under the 2019
  // models' in the legacy layout; a DynamicConv decoder wider than most references (fairseq's
  // softmax span decides its scores); pre-norm LightConv with [H, K] taps. fairseq scored each
  // reference alone: --batch-size 1.
  const std::vector<std::pair<std::string, std::string>> models = {
      {"fairseq_prenorm", "fairseq_prenorm"},
      {"fairseq_postnorm_tied", "fairseq_postnorm_tied"},
      {"fairseq_dynamicconv", "fairseq_dynamicconv"},
      {"fairseq_dynamicconv_2019", "fairseq_dynamicconv"},
      {"fairseq_dynamicconv_wide", "fairseq_dynamicconv_wide"},
      {"fairseq_lightconv_prenorm", "fairseq_lightconv_prenorm"}};
  for (const auto& [model, scores_of] : models) {
    INFO(model);
    fs::create_directories(dir.dir / model);
    fs::copy_file(vector_path("own/fairseq/pt/" + model + ".pt"), dir.dir / model / "model.pt");
    for (const char* lang : {"en", "de"})
      fs::copy_file(data + "/dict." + lang + ".txt", dir.dir / model / (std::string("dict.") + lang + ".txt"));
    require_success(run_attnlab(dir, {"import-fairseq", model + "/model.pt", "--output", "imported/" + model}));
    const CommandResult scored = run_attnlab(dir, {"generate", data, "--path", "imported/" + model, "--subset",
                                                   "valid", "--score-reference", "--batch-size", "1", "--threads", "1"});
    require_success(scored);
    // fairseq's own log-probabilities (base 2, 4 decimals) of the 20 valid references' tokens.
    const auto expected = positional_score_lines(read_file(vector_path("own/fairseq/pt/" + scores_of + ".scores")));
    const auto got = positional_score_lines(scored.out);
    REQUIRE(expected.size() == 20);
    REQUIRE(got.size() == expected.size());
    for (const auto& [line, scores] : expected) {
      INFO(line);
      REQUIRE(got.at(line).size() == scores.size());
      for (size_t t = 0; t < scores.size(); ++t) CHECK(std::abs(got.at(line)[t] - scores[t]) <= 1.01e-4);
    }
  }
}

// The H- (hypothesis) and P- (positional score) lines of a generate run.
std::string hypothesis_lines(const std::string& out) {
  std::string lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("H-") || line.starts_with("P-")) lines += line + "\n";
  return lines;
}

// The H- lines of `text` by their id ("H-3"): score and hypothesis.
std::map<std::string, std::pair<double, std::string>> best_hypotheses(const std::string& text) {
  std::map<std::string, std::pair<double, std::string>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("H-")) continue;
    const size_t tab = line.find('\t'), second = line.find('\t', tab + 1);
    lines[line.substr(0, tab)] = {std::stod(line.substr(tab + 1, second - tab - 1)), line.substr(second + 1)};
  }
  return lines;
}

// The same hypotheses (20 of them) with scores 1e-4 apart.
void require_same_hypotheses(const std::string& ours_text, const std::string& fairseq_text) {
  const auto ours = best_hypotheses(ours_text), fairseqs = best_hypotheses(fairseq_text);
  REQUIRE(fairseqs.size() == 20);
  REQUIRE(ours.size() == fairseqs.size());
  for (const auto& [id, expected] : fairseqs) {
    INFO(id);
    CHECK(ours.at(id).second == expected.second);
    CHECK(std::abs(ours.at(id).first - expected.first) < 1e-4);
  }
}

// fairseq_prenorm.pt (a fairseq-built pre-norm Transformer) imported into `dir` as `imported`.
void import_fairseq_prenorm(const TempDir& dir) {
  const std::string data = vector_path("own/fairseq/data-bin");
  fs::create_directories(dir.dir / "fq");
  fs::copy_file(vector_path("own/fairseq/pt/fairseq_prenorm.pt"), dir.dir / "fq" / "model.pt");
  for (const char* lang : {"en", "de"})
    fs::copy_file(data + "/dict." + lang + ".txt", dir.dir / "fq" / (std::string("dict.") + lang + ".txt"));
  require_success(run_attnlab(dir, {"import-fairseq", "fq/model.pt", "--output", "imported"}));
}

TEST_CASE(
    "generate's --prefix-size, --diverse-beam-groups, --match-source-len and --diversity-rate find fairseq's "
    "hypotheses") {
  TempDir dir;
  const std::string data = vector_path("own/fairseq/data-bin");
  import_fairseq_prenorm(dir);
  // fairseq's SequenceGenerator on the same model (check_export.py): its best hypothesis of each
  // sentence and its score (base 2).
  const std::map<std::string, std::vector<std::string>> strategies = {
      {"prefix", {"--beam", "4", "--prefix-size", "2"}},
      {"dbs", {"--beam", "4", "--diverse-beam-groups", "2", "--diverse-beam-strength", "0.5"}},
      {"match", {"--beam", "3", "--match-source-len"}},
      {"siblings", {"--beam", "4", "--diversity-rate", "0.5"}}};
  for (const auto& [name, flags] : strategies) {
    INFO(name);
    std::vector<std::string> args = {"generate", data, "--path", "imported", "--subset", "valid", "--threads", "1"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CommandResult generated = run_attnlab(dir, args);
    require_success(generated);
    require_same_hypotheses(generated.out,
                            read_file(vector_path("own/fairseq/pt/fairseq_prenorm." + name + ".hypotheses")));
  }
  // --unnormalized: hypotheses compared and printed by their sum of log-probabilities (--lenpen
  // ignored), as fairseq's flag: the H- score is the sum of the P- scores.
  const std::vector<std::string> base = {"generate", data, "--path", "imported", "--subset", "valid", "--threads", "1"};
  std::vector<std::string> unnormalized = base, lenpen_zero = base;
  unnormalized.insert(unnormalized.end(), {"--unnormalized", "--lenpen", "1.5"});
  lenpen_zero.insert(lenpen_zero.end(), {"--lenpen", "0"});
  const CommandResult summed = run_attnlab(dir, unnormalized);
  require_success(summed);
  CHECK(summed.out == run_attnlab(dir, lenpen_zero).out);
  const std::vector<std::string> lines = lines_of(summed.out);
  for (size_t k = 0; k + 2 < lines.size(); ++k) {
    if (!lines[k].starts_with("H-")) continue;
    double positional_sum = 0;
    std::istringstream scores(lines[k + 2].substr(lines[k + 2].find('\t') + 1));
    for (double score = 0; scores >> score;) positional_sum += score;
    CHECK(std::stod(lines[k].substr(lines[k].find('\t') + 1)) == Approx(positional_sum).margin(1e-2));
  }
  // fairseq's strategies one at a time; the beam a multiple of the groups.
  require_runtime_error(run_attnlab(dir, {"generate", data, "--path", "imported", "--subset", "valid",
                                          "--diverse-beam-groups", "2", "--match-source-len"}),
                        {"exclude one another"});
  require_runtime_error(run_attnlab(dir, {"generate", data, "--path", "imported", "--subset", "valid", "--beam", "5",
                                          "--diverse-beam-groups", "2"}),
                        {"multiple of the groups"});
}

TEST_CASE("translate --constraints finds fairseq's constrained hypotheses; --fairseq-lines prints its lines") {
  TempDir dir;
  import_fairseq_prenorm(dir);
  // Each valid source (BPE'd already) with its line of phrases, as fairseq-interactive reads them.
  const std::vector<std::string> sources = lines_of(read_file(vector_path("own/fairseq/data-bin-text/valid.en")));
  const std::vector<std::string> phrases =
      lines_of(read_file(vector_path("own/fairseq/pt/fairseq_prenorm.constraints")));
  REQUIRE(sources.size() == phrases.size());
  std::string input;
  for (size_t i = 0; i < sources.size(); ++i)
    input += sources[i] + (phrases[i].empty() ? "" : "\t" + phrases[i]) + "\n";
  write_file(dir.file("input.txt"), input);
  // One sentence per batch, as fairseq-interactive's default buffer: this random model has
  // near-ties that the rounding of a padded batch can turn.
  const std::vector<std::string> translate = {"translate", "--path",    "imported", "--no-tokenize",
                                              "--no-bpe",  "--beam",    "4",        "--batch-size",
                                              "1",         "--threads", "1"};
  for (const std::string order : {"ordered", "unordered"}) {
    INFO(order);
    std::vector<std::string> args = translate;
    args.insert(args.end(), {"--fairseq-lines", "--constraints", order});
    const CommandResult lines = run_attnlab(dir, args, dir.file("input.txt"));
    require_success(lines);
    CHECK(lines.err.empty());
    require_same_hypotheses(lines.out,
                            read_file(vector_path("own/fairseq/pt/fairseq_prenorm." + order + ".hypotheses")));
    CHECK(lines.out.find("S-1\t" + sources[1] + "\nW-1\t") != std::string::npos);
    CHECK(lines.out.find("\nC-1\tein N@@\nC-1\tres@@\nH-1\t") != std::string::npos);
    // Without --fairseq-lines: the D- texts alone, one line each.
    args.erase(args.end() - 3);
    const CommandResult plain = run_attnlab(dir, args, dir.file("input.txt"));
    require_success(plain);
    std::string texts;
    std::istringstream in(lines.out);
    for (std::string line; std::getline(in, line);)
      if (line.starts_with("D-")) texts += line.substr(line.find('\t', line.find('\t') + 1) + 1) + "\n";
    CHECK(plain.out == texts);
  }
  // --post-process none: the output symbols as they are, BPE's markers kept (the H- text).
  std::vector<std::string> kept = translate;
  kept.insert(kept.end(), {"--constraints", "--post-process", "none"});
  const CommandResult symbols = run_attnlab(dir, kept, dir.file("input.txt"));
  require_success(symbols);
  std::string h_texts;
  for (const auto& [id, hypothesis] : best_hypotheses(read_file(vector_path("own/fairseq/pt/fairseq_prenorm.ordered.hypotheses"))))
    h_texts += hypothesis.second + "\n";
  std::vector<std::string> got = lines_of(symbols.out), expected = lines_of(h_texts);
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  CHECK(got == expected);
  // --post-process typed: fairseq-interactive post-processes the S-, C- and H- lines too (the
  // W- lines' seconds left out of the comparison).
  auto fairseq_lines_with = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> args = translate;
    args.insert(args.end(), {"--fairseq-lines", "--constraints"});
    args.insert(args.end(), flags.begin(), flags.end());
    const CommandResult result = run_attnlab(dir, args, dir.file("input.txt"));
    require_success(result);
    std::vector<std::string> kept_lines;
    for (const std::string& line : lines_of(result.out))
      if (!line.starts_with("W-")) kept_lines.push_back(line);
    return kept_lines;
  };
  std::vector<std::string> processed_lines = fairseq_lines_with({});
  size_t with_markers = 0;
  for (std::string& line : processed_lines) {
    if (!(line.starts_with("S-") || line.starts_with("C-") || line.starts_with("H-"))) continue;
    with_markers += contains(line, "@@ ");
    const size_t text = line.rfind('\t') + 1;
    line = line.substr(0, text) + attn::data::post_process(line.substr(text), "subword_nmt");
  }
  CHECK(with_markers > 40);
  CHECK(fairseq_lines_with({"--post-process", "subword_nmt"}) == processed_lines);
  // --input FILE (fairseq-interactive's flag) in place of standard input; its name in errors.
  std::vector<std::string> from_file = translate;
  from_file.insert(from_file.end(), {"--constraints", "--input", "input.txt"});
  const CommandResult read_from_file = run_attnlab(dir, from_file);
  require_success(read_from_file);
  from_file.erase(from_file.end() - 2, from_file.end());
  CHECK(read_from_file.out == run_attnlab(dir, from_file, dir.file("input.txt")).out);
  write_file(dir.file("unknown.txt"), "the\tein\nthe\t\tein\n");
  from_file.insert(from_file.end(), {"--input", "unknown.txt"});
  require_runtime_error(run_attnlab(dir, from_file), {"unknown.txt:2: constraint 1 is empty"});
  from_file.back() = "missing.txt";
  require_runtime_error(run_attnlab(dir, from_file), {"missing.txt: cannot open"});
  // --print-alignment with --fairseq-lines: generate's A- lines for the same sentences (the valid
  // split, its sources unconstrained), one per hypothesis.
  std::string source_lines;
  for (const std::string& source : sources) source_lines += source + "\n";
  write_file(dir.file("sources.txt"), source_lines);
  std::vector<std::string> aligned = translate;
  aligned.insert(aligned.end(), {"--fairseq-lines", "--print-alignment"});
  const CommandResult with_alignment = run_attnlab(dir, aligned, dir.file("sources.txt"));
  require_success(with_alignment);
  const CommandResult generated =
      run_attnlab(dir, {"generate", vector_path("own/fairseq/data-bin"), "--path", "imported", "--subset", "valid",
                        "--beam", "4", "--batch-size", "1", "--threads", "1", "--print-alignment"});
  require_success(generated);
  auto a_lines = [](const std::string& text) {
    std::vector<std::string> lines;
    for (const std::string& line : lines_of(text))
      if (line.starts_with("A-")) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  CHECK(a_lines(with_alignment.out).size() == 20);
  CHECK(a_lines(with_alignment.out) == a_lines(generated.out));
  std::vector<std::string> alignment_alone = translate;
  alignment_alone.push_back("--print-alignment");
  require_runtime_error(run_attnlab(dir, alignment_alone, dir.file("sources.txt")), {"--fairseq-lines"});
  // --buffer-size N: N lines read, translated and printed at a time; fairseq's ids run on.
  std::vector<std::string> buffered = translate;
  buffered.insert(buffered.end(), {"--fairseq-lines", "--constraints", "--buffer-size", "3"});
  const CommandResult in_threes = run_attnlab(dir, buffered, dir.file("input.txt"));
  require_success(in_threes);
  require_same_hypotheses(in_threes.out, read_file(vector_path("own/fairseq/pt/fairseq_prenorm.ordered.hypotheses")));
  // One line at a time, each translation printed before the next line is read: the second line
  // is written only once the first one's translation has come out (or after 30 s, in vain).
  const std::string fifo_writer = fmt::format(
      "mkfifo in.fifo && ({{ printf '%s\\n' {}; for i in $(seq 300); do [ -s command.stdout ] && break; sleep 0.1; "
      "done; [ -s command.stdout ] && touch streamed; printf '%s\\n' {}; }} > in.fifo &)",
      shell_quoted(sources[0]), shell_quoted(sources[1]));
  std::vector<std::string> one_by_one = translate;
  one_by_one.insert(one_by_one.end(), {"--buffer-size", "1"});
  const CommandResult streamed = run_attnlab_redirected(dir, one_by_one, "< in.fifo", "", fifo_writer);
  require_success(streamed);
  CHECK(fs::exists(dir.dir / "streamed"));
  CHECK(lines_of(streamed.out).size() == 2);
  // Training sentence 121 with these phrases: at max_len the hypotheses that met them rank
  // behind the others in fairseq's dealing across banks, and fairseq stops with an assertion;
  // here the plain top candidates end the search there, phrases met.
  const std::string sentence_121 = lines_of(read_file(vector_path("own/fairseq/data-bin-text/train.en")))[121];
  write_file(dir.file("sentence-121.txt"), sentence_121 + "\tn@@ d@@\tro@@ p@@\tdie\n");
  const std::vector<std::string> at_max_len = {"translate", "--path",   "imported",  "--no-tokenize", "--no-bpe",
                                                "--threads", "1",        "--beam",    "5",             "--constraints",
                                                "unordered", "--post-process", "none"};
  const CommandResult ended = run_attnlab(dir, at_max_len, dir.file("sentence-121.txt"));
  require_success(ended);
  CHECK(ended.err.empty());
  for (const char* phrase : {" n@@ d@@ ", " ro@@ p@@ ", " die "}) CHECK(contains(" " + ended.out, phrase));
  // A bare --constraints is ordered; phrases that cannot fit in --max-len-b are named, not met.
  std::vector<std::string> args = translate;
  args.insert(args.end(), {"--constraints", "--max-len-b", "2"});
  const CommandResult short_outputs = run_attnlab(dir, args, dir.file("input.txt"));
  require_success(short_outputs);
  CHECK(short_outputs.err.find("<stdin>:2: the translation reached the maximum length") != std::string::npos);
  write_file(dir.file("unknown-phrase.txt"), "the\tein\tqqq\n");
  const CommandResult unknown = run_attnlab(dir, args, dir.file("unknown-phrase.txt"));
  require_success(unknown);
  CHECK(unknown.err.find("<stdin>:1: constraint 2 ('qqq') holds symbols the target dictionary lacks") !=
        std::string::npos);
  write_file(dir.file("empty-phrase.txt"), "the\tein\n\nthe\t\tein\n");
  require_runtime_error(run_attnlab(dir, args, dir.file("empty-phrase.txt")), {"<stdin>:3: constraint 1 is empty"});
  write_file(dir.file("special-phrase.txt"), "the\tein </s>\n");
  require_runtime_error(run_attnlab(dir, args, dir.file("special-phrase.txt")),
                        {"<stdin>:1: constraint 1 holds </s>, a symbol no translation contains"});
  require_runtime_error(run_attnlab(dir, {"translate", "--path", "imported", "--no-bpe", "--bpe-codes", "x"}),
                        {"--no-bpe and --bpe-codes"});
  args = translate;
  args.insert(args.end(), {"--constraints", "--diversity-rate", "0.5"});
  require_runtime_error(run_attnlab(dir, args, dir.file("input.txt")), {"plain beam search only"});
}

TEST_CASE("translate --replace-unk puts the source symbol each <unk> is aligned to, or its dictionary entry, in its place") {
  TempDir dir;
  import_fairseq_prenorm(dir);
  // The valid sources (BPE'd already) and one with symbols the dictionary lacks.
  std::vector<std::string> sources = lines_of(read_file(vector_path("own/fairseq/data-bin-text/valid.en")));
  sources.push_back("the Qx@@ zz@@ y house .");
  write_file(dir.file("sources.txt"), joined_lines(sources, 0, sources.size()));
  // --unkpen -1.5 makes this random model write <unk> now and then (10 times in 7 sentences).
  const std::vector<std::string> translate = {
      "translate", "--path",     "imported", "--no-tokenize", "--no-bpe",      "--beam", "4",      "--batch-size", "1",
      "--threads", "1",          "--unkpen", "-1.5",          "--max-len-b",   "30",     "--post-process", "none"};
  auto with = [&](std::vector<std::string> flags) {
    flags.insert(flags.begin(), translate.begin(), translate.end());
    const CommandResult result = run_attnlab(dir, flags, dir.file("sources.txt"));
    require_success(result);
    return result.out;
  };
  // field k (from 0) of each line starting with `prefix`, by sentence id
  const auto fields = [](const std::string& out, const std::string& prefix, size_t k) {
    std::map<size_t, std::vector<std::string>> by_id;
    for (const std::string& line : lines_of(out)) {
      if (!line.starts_with(prefix)) continue;
      std::vector<std::string> parts;
      std::istringstream in(line);
      for (std::string part; std::getline(in, part, '\t');) parts.push_back(part);
      std::vector<std::string> words;
      std::istringstream field(parts.at(k));
      for (std::string word; field >> word;) words.push_back(word);
      by_id[std::stoul(parts[0].substr(prefix.size()))] = words;
    }
    return by_id;
  };
  const std::string plain = with({"--fairseq-lines", "--print-alignment"});
  const auto plain_outputs = fields(plain, "H-", 2), alignments = fields(plain, "A-", 1);
  // An entry for every source symbol: first a wrong one (a later line wins), with columns beyond two (ignored).
  std::map<std::string, std::string> replacements;
  for (const std::string& source : sources) {
    std::istringstream in(source);
    for (std::string symbol; in >> symbol;) replacements[symbol] = "[" + symbol + "]";
  }
  std::string entries;
  for (const auto& [symbol, replacement] : replacements) entries += symbol + " wrong extra columns\n";
  for (const auto& [symbol, replacement] : replacements) entries += symbol + "\t" + replacement + "\n";
  write_file(dir.file("replacements.txt"), entries);
  const std::string copied = with({"--fairseq-lines", "--replace-unk"});
  const std::string looked_up = with({"--fairseq-lines", "--replace-unk", "replacements.txt"});
  const auto copied_outputs = fields(copied, "H-", 2), looked_up_outputs = fields(looked_up, "H-", 2);
  REQUIRE(plain_outputs.size() == sources.size());
  size_t replaced = 0;
  for (const auto& [id, output] : plain_outputs) {
    INFO("sentence " << id);
    std::vector<std::string> source_symbols;
    std::istringstream in(sources[id]);
    for (std::string symbol; in >> symbol;) source_symbols.push_back(symbol);
    std::vector<std::string> copy = output, lookup = output;
    for (const std::string& pair : alignments.at(id)) {
      const size_t dash = pair.find('-'), s = std::stoul(pair.substr(0, dash)), t = std::stoul(pair.substr(dash + 1));
      if (output.at(t) != "<unk>") continue;
      ++replaced;
      copy[t] = source_symbols.at(s);
      lookup[t] = replacements.at(copy[t]);
    }
    CHECK(copied_outputs.at(id) == copy);
    CHECK(looked_up_outputs.at(id) == lookup);
  }
  CHECK(replaced >= 10);
  // The translations alone are the D- texts; the same search, the same scores.
  std::string texts;
  for (const std::string& line : lines_of(copied))
    if (line.starts_with("D-")) texts += line.substr(line.find('\t', line.find('\t') + 1) + 1) + "\n";
  CHECK(with({"--replace-unk"}) == texts);
  CHECK(fields(copied, "P-", 1) == fields(plain, "P-", 1));
  write_file(dir.file("one-column.txt"), "the der\nhaus\n");
  require_runtime_error(run_attnlab(dir, {"translate", "--path", "imported", "--replace-unk", "one-column.txt"}),
                        {"one-column.txt:2: expected a source symbol and its replacement"});
  require_runtime_error(run_attnlab(dir, {"translate", "--path", "imported", "--replace-unk", "missing.txt"}),
                        {"missing.txt: cannot open"});
}

TEST_CASE("preprocess --dataset-impl raw keeps the text, which train and generate read as its ids; generate "
          "--replace-unk copies from it as translate does") {
  TempDir dir;
  import_fairseq_prenorm(dir);
  const std::string data = vector_path("own/fairseq/data-bin"), text = vector_path("own/fairseq/data-bin-text");
  require_success(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", text + "/train",
                                    "--validpref", text + "/valid", "--srcdict", data + "/dict.en.txt", "--tgtdict",
                                    data + "/dict.de.txt", "--destdir", "raw", "--dataset-impl", "raw"}));
  for (const char* file : {"train.en-de.en", "train.en-de.de", "valid.en-de.en", "valid.en-de.de"})
    CHECK(read_file(dir.file(std::string("raw/") + file)) ==
          read_file(text + "/" + std::string(file).substr(0, std::string(file).find('.')) +
                    std::string(file).substr(std::string(file).rfind('.'))));
  CHECK_FALSE(fs::exists(dir.file("raw/valid.en-de.en.bin")));
  // The same ids as the binarized split: the same lines, byte for byte.
  const std::vector<std::string> generate = {"--path", "imported", "--subset", "valid", "--beam",
                                             "4",      "--batch-size", "1", "--threads", "1"};
  auto generate_on = [&](const std::string& data_dir, std::vector<std::string> flags) {
    std::vector<std::string> args = {"generate", data_dir};
    args.insert(args.end(), generate.begin(), generate.end());
    args.insert(args.end(), flags.begin(), flags.end());
    const CommandResult result = run_attnlab(dir, args);
    require_success(result);
    return result.out;
  };
  CHECK(generate_on("raw", {}) == generate_on(data, {}));
  CHECK(contains(run_attnlab(dir, {"validate", "raw", "--path", "imported", "--threads", "1"}).out, "valid on 'valid'"));
  // --replace-unk: the hypotheses translate --replace-unk finds for the same lines (H- lines), and
  // the split's own lines in S- and T-.
  const std::vector<std::string> forced_unknowns = {"--unkpen", "-1.5", "--max-len-b", "30", "--replace-unk"};
  const std::string replaced = generate_on("raw", forced_unknowns);
  std::vector<std::string> translate = {"translate", "--path",     "imported", "--no-tokenize",  "--no-bpe",
                                        "--beam",    "4",          "--batch-size", "1",           "--threads",
                                        "1",         "--fairseq-lines"};
  translate.insert(translate.end(), forced_unknowns.begin(), forced_unknowns.end());
  const CommandResult translated = run_attnlab(dir, translate, text + "/valid.en");
  require_success(translated);
  auto lines_starting = [](const std::string& out, const std::string& prefix) {
    std::vector<std::string> found;
    for (const std::string& line : lines_of(out))
      if (line.starts_with(prefix)) found.push_back(line);
    return found;
  };
  CHECK(lines_starting(replaced, "H-").size() == 20);
  CHECK(lines_starting(replaced, "H-") == lines_starting(translated.out, "H-"));
  CHECK(count_matches(generate_on("raw", {"--unkpen", "-1.5", "--max-len-b", "30"}), "<unk>") > 10);
  const std::vector<std::string> valid_en = lines_of(read_file(text + "/valid.en"));
  CHECK(contains(replaced, "S-5\t" + valid_en[5] + "\n"));  // as the text has it (a piece the dictionary lacks)
  require_runtime_error(run_attnlab(dir, {"generate", data, "--path", "imported", "--subset", "valid", "--replace-unk"}),
                        {"--replace-unk copies from the split's text", "--dataset-impl raw"});
  // Training reads the text split as its ids.
  require_success(run_attnlab(dir, {"train", "raw", "--arch", "transformer_tiny", "--encoder-layers", "1",
                                    "--decoder-layers", "1", "--encoder-embed-dim", "32", "--decoder-embed-dim", "32",
                                    "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
                                    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
                                    "--max-tokens", "512", "--max-update", "2", "--threads", "1", "--save-dir", "ck"}));
}

// The optimizer state of the fairseq checkpoint `archive` (export-fairseq --with-optimizer-state
// wrote it, or fairseq) against the attnlab checkpoint `attnlab_checkpoint`'s: numbered in the
// order of `fairseq_names` (fairseq's model.parameters() of the same model, printed by fairseq),
// each entry attnlab's state of that parameter.
void check_fairseq_optimizer_state(const std::string& archive, const std::string& attnlab_checkpoint,
                                   const std::string& fairseq_names) {
  const attn::app::TorchFile file = attn::app::TorchFile::read(archive);
  const attn::data::PickleValue& history = *file.root().find("optimizer_history")->items.back();
  CHECK(history.find("optimizer_name")->text == "FairseqAdam");
  CHECK(history.find("criterion_name")->text == "LabelSmoothedCrossEntropyCriterion");
  const attn::data::PickleRef last = file.root().find("last_optimizer_state");
  REQUIRE(last);
  const attn::data::PickleValue& group = *last->find("param_groups")->items.at(0);
  CHECK(group.find("betas")->items.at(1)->number == 0.98);
  CHECK(group.find("weight_decay")->number == 0.01);
  const std::vector<std::string> names = lines_of(read_file(fairseq_names));
  CHECK(group.find("params")->items.size() == names.size());
  std::map<std::string, attn::Tensor> attnlab;
  for (auto& [name, tensor] : attn::load_safetensors(attn::app::optimizer_path(attnlab_checkpoint)).tensors)
    attnlab.emplace(name, tensor);
  // attnlab's name of a fairseq parameter: a LightConv encoder layer's LayerNorms are
  // layer_norms.0/1 here; the tied output matrix is the decoder's embedding.
  auto attnlab_state = [&](std::string name, const std::string& slot) -> const attn::Tensor* {
    for (const auto& [today, here] : {std::pair{"layer_norm1", "layer_norms.0"}, {"layer_norm2", "layer_norms.1"}})
      if (const size_t at = name.find(today); name.starts_with("encoder.layers.") && at != std::string::npos)
        name.replace(at, std::strlen(today), here);
    std::vector<std::string> aliases = {name};
    if (name == "decoder.embed_tokens.weight") aliases.push_back("decoder.output_projection.weight");
    for (const std::string& alias : aliases)
      if (const auto it = attnlab.find("state." + alias + "." + slot); it != attnlab.end()) return &it->second;
    return nullptr;
  };
  size_t with_state = 0;
  for (const auto& [number, entry] : last->find("state")->entries) {
    const std::string& name = names.at(size_t(number->integer));
    INFO(name);
    const attn::Tensor* step = attnlab_state(name, "step");
    REQUIRE(step);
    CHECK(entry->find("step")->integer == *step->data<int64_t>());
    for (const char* slot : {"exp_avg", "exp_avg_sq"}) {
      const attn::Tensor* expected = attnlab_state(name, slot);
      REQUIRE(expected);
      CHECK(file.tensor(*entry->find(slot), name).to_vector() == expected->to_vector());
    }
    ++with_state;
  }
  // Every parameter attnlab trains has its state; DynamicConv's conv_bias, fairseq's alone, none.
  size_t fairseq_only = 0;
  for (const std::string& name : names) fairseq_only += name.ends_with("conv.conv_bias");
  CHECK(with_state == names.size() - fairseq_only);
}

// The export tests' one-layer, width-16 models and their training (the Transformer of
// own/fairseq/pt/export-parameters.transformer.txt and trainer_adam.pt, with the pre-norm and
// tied-output flags the first test adds).
std::vector<std::string> export_test_training_flags() {
  std::vector<std::string> flags;
  std::istringstream words(
      "--encoder-layers 1 --decoder-layers 1 --encoder-embed-dim 16 --decoder-embed-dim 16 --encoder-ffn-embed-dim 32 "
      "--decoder-ffn-embed-dim 32 --encoder-attention-heads 2 --decoder-attention-heads 2 --max-tokens 2048 "
      "--weight-decay 0.01 --adam-betas");
  for (std::string word; words >> word;) flags.push_back(word);
  flags.push_back("(0.9, 0.98)");
  return flags;
}

TEST_CASE("export-fairseq writes a fairseq model archive that import-fairseq reads back as the same model") {
  TempDir dir;
  const std::string data = vector_path("own/fairseq/data-bin");
  const std::vector<std::string> small = export_test_training_flags();
  auto train = [&](const std::string& arch, std::vector<std::string> flags) {
    std::vector<std::string> args = {"train", data, "--arch", arch, "--threads", "1", "--no-progress-bar", "--save-dir",
                                     arch == "transformer_tiny" ? "transformer" : "dynamicconv"};
    args.insert(args.end(), small.begin(), small.end());
    args.insert(args.end(), {"--max-update", "2"});
    args.insert(args.end(), flags.begin(), flags.end());
    require_success(run_attnlab(dir, args));
  };
  // A pre-norm Transformer with a tied output matrix; a DynamicConv model (kernels narrower than
  // every reference, so that fairseq's softmax span, which the import turns on, changes nothing).
  train("transformer_tiny",
        {"--encoder-normalize-before", "--decoder-normalize-before", "--share-decoder-input-output-embed"});
  train("dynamicconv_tiny", {"--encoder-kernel-size-list", "[3]", "--decoder-kernel-size-list", "[3]", "--decoder-glu",
                             "false", "--decoder-conv-dim", "24"});
  for (const auto& [model, arch] : {std::pair{"transformer", "transformer"}, std::pair{"dynamicconv", "lightconv"}}) {
    INFO(model);
    const std::string original = std::string(model) + "/checkpoint_last";
    const CommandResult exported = run_attnlab(dir, {"export-fairseq", original, "--output", std::string("fq-") + model});
    require_success(exported);
    CHECK(contains(exported.out, fmt::format("(fairseq --arch {}, ", arch)));
    CHECK(contains(exported.out, "with dict.en.txt, dict.de.txt"));
    for (const char* file : {"model.pt", "dict.en.txt", "dict.de.txt"})
      CHECK(fs::exists(dir.dir / (std::string("fq-") + model) / file));
    // The same checkpoint writes the same bytes.
    require_success(run_attnlab(dir, {"export-fairseq", original, "--output", "again"}));
    CHECK(read_file(dir.file("again/model.pt")) == read_file(dir.file(std::string("fq-") + model + "/model.pt")));
    fs::remove_all(dir.dir / "again");
    CHECK_FALSE(attn::app::TorchFile::read(dir.file(std::string("fq-") + model + "/model.pt"))
                    .root()
                    .find("last_optimizer_state"));
    require_success(run_attnlab(dir, {"export-fairseq", original, "--output", "with-state", "--with-optimizer-state"}));
    check_fairseq_optimizer_state(dir.file("with-state/model.pt"), dir.file(original),
                                  vector_path(std::string("own/fairseq/pt/export-parameters.") + model + ".txt"));
    // And back: import-fairseq --with-optimizer-state gives the same optimizer file.
    require_success(run_attnlab(
        dir, {"import-fairseq", "with-state/model.pt", "--output", "round-trip/ck", "--with-optimizer-state"}));
    CHECK(read_file(dir.file("round-trip/ck.optimizer.safetensors")) ==
          read_file(attn::app::optimizer_path(dir.file(original))));
    fs::remove_all(dir.dir / "with-state");
    fs::remove_all(dir.dir / "round-trip");

    require_success(run_attnlab(
        dir, {"import-fairseq", std::string("fq-") + model + "/model.pt", "--output", std::string("back-") + model}));
    const attn::SafetensorsFile before = attn::load_safetensors(dir.file(original + ".safetensors"));
    const attn::SafetensorsFile after = attn::load_safetensors(dir.file(std::string("back-") + model + ".safetensors"));
    REQUIRE(before.tensors.size() == after.tensors.size());
    for (size_t i = 0; i < before.tensors.size(); ++i) {
      INFO(before.tensors[i].first);
      CHECK(before.tensors[i].first == after.tensors[i].first);
      CHECK(before.tensors[i].second.to_vector() == after.tensors[i].second.to_vector());
    }
    std::string lines[2];
    for (int side = 0; side < 2; ++side) {
      const std::string path = side == 0 ? original : std::string("back-") + model;
      for (const char* mode : {"--score-reference", "--print-alignment"}) {
        const CommandResult generated = run_attnlab(
            dir, {"generate", data, "--path", path, "--subset", "valid", "--beam", "2", mode, "--threads", "1"});
        require_success(generated);
        lines[side] += hypothesis_lines(generated.out);
      }
    }
    CHECK(lines[0] == lines[1]);
  }
}

// own/fairseq/pt/trainer_adam.pt: a checkpoint as fairseq's trainer saves it, with FairseqAdam's
// state after three steps (make_trainer_checkpoint.py), of the Transformer of the test above.
TEST_CASE("import-fairseq --with-optimizer-state reads fairseq's Adam state, and train resumes with it") {
  TempDir dir;
  const std::string data = vector_path("own/fairseq/data-bin");
  const std::string trainer_checkpoint = vector_path("own/fairseq/pt/trainer_adam.pt");
  require_success(
      run_attnlab(dir, {"import-fairseq", trainer_checkpoint, "--source-dict", data + "/dict.en.txt", "--target-dict",
                        data + "/dict.de.txt", "--output", "imported/ck", "--with-optimizer-state"}));
  check_fairseq_optimizer_state(trainer_checkpoint, dir.file("imported/ck"),
                                vector_path("own/fairseq/pt/export-parameters.transformer.txt"));
  // The same checkpoint in torch.save's legacy layout: the same optimizer file.
  require_success(run_attnlab(dir, {"import-fairseq", vector_path("own/fairseq/pt/trainer_adam_legacy.pt"),
                                    "--source-dict", data + "/dict.en.txt", "--target-dict", data + "/dict.de.txt",
                                    "--output", "legacy/ck", "--with-optimizer-state"}));
  CHECK(read_file(dir.file("legacy/ck.optimizer.safetensors")) ==
        read_file(dir.file("imported/ck.optimizer.safetensors")));
  const nlohmann::json metadata = nlohmann::json::parse(read_file(dir.file("imported/ck.json"))).at("metadata");
  CHECK(metadata.at("num_updates") == 3);
  CHECK(metadata.at("optimizer_options").at("adam_betas") == nlohmann::json::array({0.9, 0.98}));
  // Training goes on from update 3 with fairseq's moments.
  std::vector<std::string> resume = {"train",
                                     data,
                                     "--arch",
                                     "transformer_tiny",
                                     "--threads",
                                     "1",
                                     "--save-dir",
                                     "ck",
                                     "--restore-file",
                                     dir.file("imported/ck"),
                                     "--reset-lr-scheduler",
                                     "--reset-dataloader",
                                     "--reset-meters",
                                     "--encoder-normalize-before",
                                     "--decoder-normalize-before",
                                     "--share-decoder-input-output-embed"};
  const std::vector<std::string> model = export_test_training_flags();
  resume.insert(resume.end(), model.begin(), model.end());
  resume.insert(resume.end(), {"--max-update", "4"});
  const CommandResult resumed = run_attnlab(dir, resume);
  require_success(resumed);
  CHECK(contains(resumed.out, "(epoch 1, update 3)"));
  CHECK(contains(resumed.out, "done training (reached --max-update 4)"));
  // A model archive without the trainer's state, asked for it.
  require_runtime_error(run_attnlab(dir, {"import-fairseq", vector_path("own/fairseq/pt/fairseq_prenorm.pt"),
                                          "--source-dict", data + "/dict.en.txt", "--target-dict",
                                          data + "/dict.de.txt", "--output", "x", "--with-optimizer-state"}),
                        {"holds no optimizer state"});
}

TEST_CASE("export-fairseq refuses a model fairseq has no place for, naming why") {
  TempDir dir;
  const std::vector<std::string> one_update = {"--encoder-layers", "1", "--decoder-layers", "1", "--max-tokens", "2048",
                                               "--max-update", "1"};
  auto trained = [&](const std::string& arch, const std::string& flag) {
    std::vector<std::string> args = {"train",   vector_path("own/fairseq/data-bin"), "--arch", arch, "--threads", "1",
                                     "--no-progress-bar", "--save-dir", arch + flag};
    args.insert(args.end(), one_update.begin(), one_update.end());
    if (!flag.empty()) args.push_back(flag);
    require_success(run_attnlab(dir, args));
    return arch + flag + "/checkpoint_last";
  };
  require_runtime_error(
      run_attnlab(dir, {"export-fairseq", trained("transformer_tiny", "--scale-norm"), "--output", "x"}),
      {"scale_norm = true"});
  require_runtime_error(run_attnlab(dir, {"export-fairseq", trained("linformer_tiny", ""), "--output", "x"}),
                        {"linformer", "fairseq's transformer has softmax in all three"});
  // --with-optimizer-state without the optimizer's file, beside a moving average of the weights,
  // or from a checkpoint that predates the recorded optimizer settings.
  const std::vector<std::string> with_state = {"--output", "x", "--with-optimizer-state"};
  auto export_with_state = [&](const std::string& checkpoint) {
    std::vector<std::string> args = {"export-fairseq", checkpoint};
    args.insert(args.end(), with_state.begin(), with_state.end());
    return run_attnlab(dir, args);
  };
  require_runtime_error(export_with_state(trained("transformer_tiny", "--no-save-optimizer-state")),
                        {"no optimizer file", "--no-save-optimizer-state"});
  const std::string plain = trained("transformer_tiny", "");
  nlohmann::json checkpoint = nlohmann::json::parse(read_file(dir.file(plain + ".json")));
  checkpoint["metadata"]["ema"] = {{"decay", 0.99}};
  write_file(dir.dir / (plain + ".json"), checkpoint.dump());
  require_runtime_error(export_with_state(plain), {"moving average", "--ema-decay"});
  checkpoint["metadata"]["ema"] = nullptr;
  checkpoint["metadata"].erase("optimizer_options");
  write_file(dir.dir / (plain + ".json"), checkpoint.dump());
  require_runtime_error(export_with_state(plain), {"does not record its optimizer's settings"});
  CHECK_FALSE(fs::exists(dir.dir / "x" / "model.pt"));
}

TEST_CASE("generate takes fairseq-generate's --results-path, --scoring sacrebleu, --tokenizer moses and "
          "--skip-invalid-size-inputs-valid-test") {
  TempDir dir;
  const std::string data = vector_path("own/fairseq/data-bin");
  require_success(train_on_fairseq_bin(dir, {"--max-tokens", "2048", "--max-update", "2", "--max-source-positions", "20"}));
  const std::vector<std::string> generate = {"generate", data, "--path", "checkpoints/checkpoint_last", "--subset",
                                             "valid", "--beam", "2", "--max-len-b", "5", "--threads", "1"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> all = generate;
    all.insert(all.end(), more.begin(), more.end());
    return run_attnlab(dir, all);
  };
  // Sources beyond the model's 20 positions: refused, or left out and said so.
  require_runtime_error(with({}), {"valid.en-de.en.bin", "more than the model's max_source_positions 20"});
  const CommandResult skipped = with({"--skip-invalid-size-inputs-valid-test"});
  require_success(skipped);
  std::smatch count;
  REQUIRE(std::regex_search(skipped.err, count, std::regex(R"(([0-9]+) of 20 sentences are longer than the model's)")));
  const int left_out = std::stoi(count[1].str());
  CHECK(left_out > 0);
  CHECK(count_matches(skipped.out, R"((^|\n)S-[0-9]+\t)") == 20 - left_out);

  // --results-path: the same lines in DIR/generate-valid.txt, nothing on standard output.
  const CommandResult written = with({"--skip-invalid-size-inputs-valid-test", "--results-path", "results"});
  require_success(written);
  CHECK(written.out.empty());
  CHECK(read_file(dir.file("results/generate-valid.txt")) == skipped.out);

  // --tokenizer moses: the D- lines and references detokenized; --scoring sacrebleu scores them
  // as `score` scores the D- lines against the T- lines.
  const CommandResult detok = with({"--skip-invalid-size-inputs-valid-test", "--tokenizer", "moses", "--scoring",
                                    "sacrebleu", "--remove-bpe"});
  require_success(detok);
  std::string hypotheses, references;
  std::istringstream lines(detok.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("T-")) references += line.substr(line.find('\t') + 1) + "\n";
    if (line.starts_with("D-")) hypotheses += line.substr(line.find('\t', line.find('\t') + 1) + 1) + "\n";
  }
  write_file(dir.file("hyp.txt"), hypotheses);
  write_file(dir.file("ref.txt"), references);
  const CommandResult scored = run_attnlab(dir, {"score", "-r", "ref.txt", "-i", "hyp.txt", "-w", "2"});
  require_success(scored);
  std::smatch bleu;
  REQUIRE(std::regex_search(scored.out, bleu, std::regex(R"(= ([0-9.]+ [0-9./]+ \(BP = .*\)))")));
  CHECK(contains(detok.out, "Generate valid with beam=2: BLEU = " + bleu[1].str()));
  CHECK(contains(skipped.out, " .\n"));     // tokenized: the final period split off
  CHECK_FALSE(contains(references, " .\n"));  // detokenized: joined again
  // fairseq's --post-process names its schemes: subword_nmt is the bare flag's; others refused.
  CHECK(with({"--skip-invalid-size-inputs-valid-test", "--tokenizer", "moses", "--scoring", "sacrebleu",
              "--post-process", "subword_nmt"})
            .out == detok.out);
  require_command_line_error(with({"--remove-bpe", "##"}), "--post-process: ## not in {subword_nmt");
  require_runtime_error(with({"--fp16"}), {"--fp16", "--matmul-precision bf16"});
}

TEST_CASE("validate repeats the validation loss that train logged for the same checkpoint") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const CommandResult validated =
      run_attnlab(workspace.dir, {"validate", "data-bin", "--path", "checkpoints/checkpoint2", "--max-tokens", "512",
                                  "--threads", "1"});
  require_success(validated);
  std::smatch numbers;
  REQUIRE(std::regex_search(
      validated.out, numbers,
      std::regex(R"(^valid on 'valid' subset (\| loss [0-9.]+ \| nll_loss [0-9.]+ \| ppl [0-9.]+) \| 8 sentences, )")));
  CHECK(contains(workspace.training.out, "epoch 002 | valid on 'valid' subset " + numbers[1].str()));
}

TEST_CASE("generate --beam 2 prints S-, T-, H-, D- and P- lines for every test sentence") {
  const std::vector<std::string> lines = generated_lines({"--beam", "2"});
  REQUIRE(lines.size() == 8 * 5 + 1);
  for (size_t i = 0; i < 8; ++i) {
    INFO("sentence " << i);
    const auto line = [&](size_t k) -> const std::string& { return lines[5 * i + k]; };
    CHECK(line(0).starts_with(fmt::format("S-{}\t", i)));
    CHECK(line(1).starts_with(fmt::format("T-{}\t", i)));
    std::smatch h, d;
    REQUIRE(std::regex_match(line(2), h, std::regex(fmt::format(R"(H-{}\t(-?[0-9.e+-]+)\t(.*))", i))));
    REQUIRE(std::regex_match(line(3), d, std::regex(fmt::format(R"(D-{}\t(-?[0-9.e+-]+)\t(.*))", i))));
    CHECK(h[1] == d[1]);
    REQUIRE(line(4).starts_with(fmt::format("P-{}\t", i)));
    // One log-probability per hypothesis token and one for </s>.
    const std::string tokens = h[2].str();
    const size_t num_tokens = tokens.empty() ? 0 : size_t(std::count(tokens.begin(), tokens.end(), ' ')) + 1;
    const std::string scores = line(4).substr(line(4).find('\t') + 1);
    CHECK(size_t(std::count(scores.begin(), scores.end(), ' ')) + 1 == num_tokens + 1);
  }
  CHECK(lines.back().starts_with("Generate test with beam=2: BLEU4 = "));
}

TEST_CASE("generate --print-alignment prints an A- line per hypothesis: a source word for every output word") {
  const std::vector<std::string> lines = generated_lines({"--beam", "2", "--print-alignment"});
  REQUIRE(lines.size() == 8 * 6 + 1);
  const auto words = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string word; in >> word;) out.push_back(word);
    return out;
  };
  for (size_t i = 0; i < 8; ++i) {
    INFO("sentence " << i);
    const auto line = [&](size_t k) -> const std::string& { return lines[6 * i + k]; };
    REQUIRE(line(5).starts_with(fmt::format("A-{}\t", i)));
    const size_t source_words = words(line(0).substr(line(0).find('\t') + 1)).size();
    const size_t output_words = words(line(2).substr(line(2).rfind('\t') + 1)).size();
    const std::vector<std::string> pairs = words(line(5).substr(line(5).find('\t') + 1));
    REQUIRE(pairs.size() == output_words);
    for (size_t t = 0; t < pairs.size(); ++t) {
      std::smatch pair;
      REQUIRE(std::regex_match(pairs[t], pair, std::regex(R"(([0-9]+)-([0-9]+))")));
      CHECK(std::stoul(pair[1].str()) < source_words);
      CHECK(std::stoul(pair[2].str()) == t);
    }
  }
  const std::vector<std::string> unknown = {"generate", "data-bin", "--path", "checkpoints/checkpoint_last",
                                            "--print-alignment=fuzzy"};
  require_command_line_error(run_attnlab(TrainingWorkspace::get().dir, unknown), "fuzzy");
}

TEST_CASE("generate --print-alignment soft prints each output token's attention over the source tokens") {
  const std::vector<std::string> lines = generated_lines({"--beam", "2", "--print-alignment", "soft"});
  REQUIRE(lines.size() == 8 * 6 + 1);
  const auto split = [](const std::string& text, char separator) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string part; std::getline(in, part, separator);) out.push_back(part);
    return out;
  };
  for (size_t i = 0; i < 8; ++i) {
    INFO("sentence " << i);
    const auto line = [&](size_t k) -> const std::string& { return lines[6 * i + k]; };
    REQUIRE(line(5).starts_with(fmt::format("A-{}\t", i)));
    // Tokens with </s>: the source's words + 1, the output's words + 1.
    const size_t source_tokens = split(line(0).substr(line(0).find('\t') + 1), ' ').size() + 1;
    const size_t output_tokens = split(line(2).substr(line(2).rfind('\t') + 1), ' ').size() + 1;
    const std::vector<std::string> rows = split(line(5).substr(line(5).find('\t') + 1), ' ');
    REQUIRE(rows.size() == output_tokens);
    for (const std::string& row : rows) {
      const std::vector<std::string> weights = split(row, ',');
      REQUIRE(weights.size() == source_tokens);
      double sum = 0;
      for (const std::string& w : weights) {
        CHECK(std::regex_match(w, std::regex(R"([01]\.[0-9]{6})")));
        sum += std::stod(w);
      }
      CHECK(sum == Approx(1.0).margin(1e-5 * double(source_tokens)));  // softmax rows: padding has no weight
    }
  }
}

TEST_CASE("generate --score-reference prints the references as hypotheses, scored by the model") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const std::vector<std::string> lines = generated_lines({"--score-reference"});
  REQUIRE(lines.size() == 8 * 5 + 1);
  for (size_t i = 0; i < 8; ++i) {
    INFO("sentence " << i);
    const std::string& reference = lines[5 * i + 1];
    const std::string& hypothesis = lines[5 * i + 2];
    CHECK(hypothesis.substr(hypothesis.rfind('\t') + 1) == reference.substr(reference.find('\t') + 1));
  }
  CHECK(lines.back().starts_with("Generate test with beam=5: BLEU4 = 100.00"));
  require_runtime_error(run_attnlab(workspace.dir, {"generate", "data-bin", "--path", "checkpoints/checkpoint_last",
                                                    "--score-reference", "--knn-datastore", "train"}),
                        {"--score-reference"});
}

TEST_CASE("generate --sampling: the same seed gives the same samples; sampling flags without it are refused") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const auto generate = [&](const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"generate", "data-bin", "--path", "checkpoints/checkpoint_last", "--threads", "1"};
    args.insert(args.end(), flags.begin(), flags.end());
    return run_attnlab(workspace.dir, args);
  };
  const CommandResult first = generate({"--sampling", "--beam", "2", "--nbest", "2", "--seed", "3"});
  const CommandResult second = generate({"--sampling", "--beam", "2", "--nbest", "2", "--seed", "3"});
  require_success(first);
  CHECK(second.out == first.out);
  CHECK(lines_of(first.out).size() == 8 * (2 + 2 * 3) + 1);  // S-, T- and two hypotheses of three lines each
  require_success(generate({"--sampling", "--sampling-topp", "0.9", "--temperature", "0.7", "--beam", "1"}));
  require_runtime_error(generate({"--sampling-topk", "5"}), {"need --sampling"});
  require_runtime_error(generate({"--sampling", "--sampling-topk", "5", "--sampling-topp", "0.5"}), {"not both"});
  require_command_line_error(generate({"--temperature", "0"}), "--temperature");
}

TEST_CASE("generate and translate --path A:B decode with an ensemble; a model with itself is the model") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const auto generate = [&](const std::string& path) {
    return run_attnlab(workspace.dir, {"generate", "data-bin", "--path", path, "--beam", "2", "--threads", "1"});
  };
  // The hypotheses' texts (scores may differ in their last digits: a sum of two equal probabilities).
  const auto hypotheses = [](const std::string& out) {
    std::vector<std::string> texts;
    for (const std::string& line : lines_of(out))
      if (line.starts_with("D-")) texts.push_back(line.substr(line.rfind('\t') + 1));
    return texts;
  };
  const CommandResult alone = generate("checkpoints/checkpoint_last");
  const CommandResult twice = generate("checkpoints/checkpoint_last:checkpoints/checkpoint_last");
  require_success(alone);
  require_success(twice);
  CHECK(contains(twice.err, "an ensemble of 2 models"));
  REQUIRE(hypotheses(alone.out).size() == 8);
  CHECK(hypotheses(twice.out) == hypotheses(alone.out));
  const CommandResult mixed = generate("checkpoints/checkpoint1:checkpoints/checkpoint_last");
  require_success(mixed);
  CHECK(hypotheses(mixed.out).size() == 8);
  require_runtime_error(generate("checkpoints/checkpoint1::checkpoints/checkpoint_last"), {"empty checkpoint name"});
  require_runtime_error(generate("checkpoints/checkpoint1:"), {"empty checkpoint name"});
  require_runtime_error(generate("checkpoints/checkpoint1:no-such-checkpoint"), {"no-such-checkpoint"});

  TempDir dir;
  write_file(dir.file("input.en"), joined_lines(lines_of(read_file(workspace.dir.file("raw/test.en"))), 0, 4));
  const std::string best = workspace.dir.file("checkpoints/checkpoint_best");
  const auto translate = [&](const std::string& path) {
    return run_attnlab(dir, {"translate", "--path", path, "--beam", "2", "--threads", "1"}, dir.file("input.en"));
  };
  const CommandResult translated = translate(best), translated_twice = translate(best + ":" + best);
  require_success(translated_twice);
  CHECK(translated_twice.out == translated.out);
}

TEST_CASE("generate --knn-datastore train: on the neighbours alone greedy search gives back the training targets") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const CommandResult generated =
      run_attnlab(workspace.dir, {"generate", "data-bin", "--path", "checkpoints/checkpoint_last", "--gen-subset",
                                  "train", "--beam", "1", "--knn-datastore", "train", "--knn-k", "1", "--knn-lambda",
                                  "1", "--quiet", "--threads", "1"});
  require_success(generated);
  CHECK(contains(generated.err, "kNN-MT datastore: "));
  CHECK(contains(generated.err, " keys of 32 numbers from 'train'"));
  // Each step's state is the key stored for that very position: the reference comes back.
  CHECK(contains(generated.out, "Generate train with beam=1: BLEU4 = 100.00"));
  require_runtime_error(run_attnlab(workspace.dir, {"generate", "data-bin", "--path", "checkpoints/checkpoint_last",
                                                    "--knn-datastore", "nosuchsplit", "--threads", "1"}),
                        {"nosuchsplit"});
}

TEST_CASE("generate --knn-datastore-file: built and written once, read back, built again for another model") {
  TempDir dir;
  const std::string file = dir.file("datastores/train.knn.safetensors");  // the folder made on writing
  const auto generate = [&](const std::string& checkpoint) { return generate_from_own_keys(file, {}, checkpoint); };
  const CommandResult first = generate("checkpoints/checkpoint_last");
  require_success(first);
  CHECK(contains(first.err, "kNN-MT datastore: written to " + file));
  const CommandResult second = generate("checkpoints/checkpoint_last");
  require_success(second);
  CHECK(contains(second.err, "kNN-MT datastore: read from " + file));
  CHECK(second.out == first.out);
  CHECK(contains(second.out, "Generate train with beam=1: BLEU4 = 100.00"));
  const CommandResult other = generate("checkpoints/checkpoint1");
  require_success(other);
  CHECK(contains(other.err, file + " was built from another model, corpus, key size or lists; built again and written there"));
  CHECK(contains(other.out, "Generate train with beam=1: BLEU4 = 100.00"));
}

TEST_CASE("translate --knn-datastore-file decodes with a datastore generate kept; one of other weights is refused") {
  TempDir dir;
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const std::string file = dir.file("train.knn.safetensors");
  require_success(generate_from_own_keys(file, {}));
  // The training pairs' own keys alone (k 1, λ 1): each sentence's reference, as generate finds.
  const std::vector<std::string> translate = {"translate",  "--path", workspace.dir.file("checkpoints/checkpoint_last"),
                                              "--no-tokenize", "--beam", "1", "--knn-datastore-file", file,
                                              "--knn-k",       "1",      "--knn-lambda", "1", "--threads", "1"};
  const CommandResult translated = run_attnlab(dir, translate, workspace.dir.file("tok/train.en"));
  require_success(translated);
  CHECK(translated.out == read_file(workspace.dir.file("tok/train.de")));
  CHECK(contains(translated.err, "kNN-MT datastore: "));
  std::vector<std::string> other = translate;
  other[2] = workspace.dir.file("checkpoints/checkpoint1");
  require_runtime_error(run_attnlab(dir, other, workspace.dir.file("tok/train.en")),
                        {file, "built with other weights than the model's"});
}

TEST_CASE("generate --knn-datastore-file: a file of this model whose values are no target symbols is refused") {
  TempDir dir;
  const std::string file = dir.file("train.knn.safetensors");
  require_success(generate_from_own_keys(file, {}));
  attn::SafetensorsFile store = attn::load_safetensors(file);
  for (auto& [name, tensor] : store.tensors)
    if (name == "values") tensor.data<int64_t>()[0] = int64_t(1) << 40;  // the identity in its metadata kept
  attn::save_safetensors(file, store.tensors, store.metadata);
  require_runtime_error(generate_from_own_keys(file, {}), {file, "token id 1099511627776, beyond the model's"});
}

TEST_CASE("generate --knn-reduced-dims: keys and queries on their principal axes, the file rebuilt for another size") {
  TempDir dir;
  const std::string file = dir.file("train.knn.safetensors");
  const auto generate = [&](const std::string& dims) {
    return generate_from_own_keys(file, {"--knn-reduced-dims", dims});
  };
  // All 32 axes: a rotation, which keeps every distance, so the search still finds each state's own key.
  const CommandResult rotated = generate("32");
  require_success(rotated);
  CHECK(contains(rotated.err, " keys of 32 numbers (PCA of the 32-number states, 100.0% of their variance) from 'train'"));
  CHECK(contains(rotated.out, "Generate train with beam=1: BLEU4 = 100.00"));
  const CommandResult reduced = generate("8");
  require_success(reduced);
  CHECK(contains(reduced.err, file + " was built from another model, corpus, key size or lists; built again and written there"));
  const size_t described = reduced.err.find(" keys of 8 numbers (PCA of the 32-number states, ");
  REQUIRE(described != std::string::npos);
  const std::string keys = reduced.err.substr(described);
  CHECK(contains(keys, "% of their variance) from 'train'"));
  // Read back, the file gives the same share of the variance as the build measured.
  const CommandResult reread = generate("8");
  require_success(reread);
  CHECK(contains(reread.err, "read from " + file));
  CHECK(contains(reread.err, keys.substr(0, keys.find(" from 'train'"))));
  require_runtime_error(generate("40"), {"cannot reduce the model's 32-number states to 40 dims"});
}

TEST_CASE("generate --knn-lists: keys in k-means lists, each query probing its nearest; the file rebuilt for others") {
  TempDir dir;
  const std::string file = dir.file("train.knn.safetensors");
  const auto generate = [&](const std::string& lists, const std::string& probes) {
    return generate_from_own_keys(file, {"--knn-lists", lists, "--knn-probes", probes});
  };
  // Each state's own key lies in the list of the centroid nearest to it, which its query probes first.
  const CommandResult listed = generate("4", "2");
  require_success(listed);
  CHECK(contains(listed.err, " keys of 32 numbers in 4 lists from 'train'"));
  CHECK(contains(listed.out, "Generate train with beam=1: BLEU4 = 100.00"));
  const CommandResult reread = generate("4", "1");
  require_success(reread);
  CHECK(contains(reread.err, "read from " + file));
  CHECK(contains(reread.out, "Generate train with beam=1: BLEU4 = 100.00"));
  const CommandResult other = generate("8", "2");
  require_success(other);
  CHECK(contains(other.err, file + " was built from another model, corpus, key size or lists; built again"));
  CHECK(contains(other.err, " keys of 32 numbers in 8 lists from 'train'"));
  require_runtime_error(generate("100000000", "2"), {"cannot split", "keys into 100000000 lists"});
}

TEST_CASE("generate --knn-relative-temperature: T is tau times the keys' variance, the search that absolute T makes") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string file = dir.file("train.knn.safetensors");
  const auto generate = [&](const std::vector<std::string>& temperature) {
    std::vector<std::string> args{"generate", "data-bin", "--path", "checkpoints/checkpoint_last", "--beam", "1",
                                  "--knn-datastore", "train", "--knn-datastore-file", file, "--knn-k", "4",
                                  "--knn-lambda", "0.5", "--threads", "1"};
    args.insert(args.end(), temperature.begin(), temperature.end());
    return run_attnlab(workspace.dir, args);
  };
  const CommandResult relative = generate({"--knn-relative-temperature", "0.5"});
  require_success(relative);
  // "(k 4, T 12.3456 (= 0.5 × key variance 24.6912), lambda 0.5)"
  const size_t t = relative.err.find("(k 4, T ");
  REQUIRE(t != std::string::npos);
  const std::string described = relative.err.substr(t + 8);
  const size_t times = described.find(" (= 0.5 × key variance ");
  REQUIRE(times != std::string::npos);
  const double temperature = std::stod(described.substr(0, times));
  const double variance = std::stod(described.substr(times + std::string(" (= 0.5 × key variance ").size()));
  CHECK(variance > 0.0);
  CHECK(temperature == Approx(0.5 * variance).epsilon(1e-5));  // the variance printed to 6 digits
  // The same output as that T (printed to every digit) given as an absolute one; another T gives
  // other per-token scores.
  const auto token_scores = [](const CommandResult& result) {
    std::vector<std::string> p_lines;
    for (const std::string& line : lines_of(result.out))
      if (line.starts_with("P-")) p_lines.push_back(line);
    return p_lines;
  };
  const CommandResult absolute = generate({"--knn-temperature", described.substr(0, times)});
  require_success(absolute);
  CHECK(absolute.out == relative.out);
  CHECK_FALSE(token_scores(relative).empty());
  const CommandResult sharper = generate({"--knn-relative-temperature", "0.05"});
  require_success(sharper);
  CHECK(token_scores(sharper) != token_scores(relative));
  require_command_line_error(generate({"--knn-relative-temperature", "0.5", "--knn-temperature", "3"}),
                             "--knn-temperature");
  require_command_line_error(generate({"--knn-relative-temperature", "0"}), "--knn-relative-temperature");
}

TEST_CASE("average writes the element-wise mean of the last two epoch checkpoints") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string checkpoints = workspace.dir.file("checkpoints");
  const CommandResult averaged = run_attnlab(
      dir, {"average", "--inputs", checkpoints, "--num-epoch-checkpoints", "2", "--output", "averaged"});
  require_success(averaged);
  CHECK(contains(averaged.out, "averaged 2 checkpoints"));
  const attn::SafetensorsFile mean = attn::load_safetensors(dir.file("averaged.safetensors"));
  const attn::SafetensorsFile first = attn::load_safetensors(checkpoints + "/checkpoint1.safetensors");
  const attn::SafetensorsFile second = attn::load_safetensors(checkpoints + "/checkpoint2.safetensors");
  REQUIRE(mean.tensors.size() == first.tensors.size());
  for (const auto& [name, tensor] : mean.tensors) {
    const std::vector<double> m = tensor.to_vector(), a = first.at(name).to_vector(), b = second.at(name).to_vector();
    REQUIRE(m.size() == a.size());
    for (size_t k = 0; k < m.size(); ++k) {
      INFO(name << " element " << k);
      REQUIRE(std::abs(m[k] - (a[k] + b[k]) / 2) <= 1e-6 * (1 + std::abs(m[k])));
    }
  }
  require_success(run_attnlab(dir, {"validate", workspace.dir.file("data-bin"), "--path", "averaged"}));
}

TEST_CASE("average needs only the weights: checkpoints without their optimizer state are averaged") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  for (const char* name : {"checkpoint1", "checkpoint2"})
    for (const char* extension : {".safetensors", ".json"})
      fs::copy_file(workspace.dir.file(std::string("checkpoints/") + name + extension),
                    dir.file(std::string(name) + extension));
  REQUIRE(fs::exists(workspace.dir.file("checkpoints/checkpoint1.optimizer.safetensors")));
  require_success(run_attnlab(dir, {"average", "--inputs", "checkpoint1", "checkpoint2", "--output", "averaged"}));
  require_success(run_attnlab(dir, {"average", "--inputs", ".", "--num-epoch-checkpoints", "2", "--output", "again"}));
  CHECK(read_file(dir.file("again.safetensors")) == read_file(dir.file("averaged.safetensors")));
}

TEST_CASE("convert swaps the decoder's attention for T2R, carrying every shared weight over; the result decodes") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string source = workspace.dir.file("checkpoints/checkpoint_last");
  const CommandResult converted =
      run_attnlab(dir, {"convert", "--from", source, "--output", "t2r/converted", "--model-override",
                        "decoder_self_mixer=kernel:t2r+additive", "--model-override", "cross_mixer=kernel:t2r+additive",
                        "--model-override", "causal_proj_dim=3"});
  require_success(converted);
  CHECK(contains(converted.out, "new 4 tensors:\n  decoder.layers.0.self_attn.fc3.weight\n"
                                "  decoder.layers.0.self_attn.fc3.bias\n  decoder.layers.0.encoder_attn.fc4.weight\n"
                                "  decoder.layers.0.encoder_attn.fc4.bias\n"));
  CHECK(contains(converted.out, "dropped 0 tensors\n"));
  const attn::SafetensorsFile before = attn::load_safetensors(source + ".safetensors");
  const attn::SafetensorsFile after = attn::load_safetensors(dir.file("t2r/converted.safetensors"));
  REQUIRE(after.tensors.size() == before.tensors.size() + 4);
  for (const auto& [name, tensor] : before.tensors) {
    INFO(name);
    CHECK(after.at(name).to_vector() == tensor.to_vector());
  }
  CHECK(after.at("decoder.layers.0.self_attn.fc3.weight").shape() == attn::Shape({2 * 3, 16}));
  CHECK(after.at("decoder.layers.0.encoder_attn.fc4.weight").shape() == attn::Shape({2 * 32, 16}));
  CHECK(fs::exists(dir.file("t2r/dict.en.txt")));
  require_success(
      run_attnlab(dir, {"generate", workspace.dir.file("data-bin"), "--path", "t2r/converted", "--beam", "2"}));
  // Models of other mixers decode as one ensemble: the softmax checkpoint with its T2R conversion.
  const CommandResult ensemble = run_attnlab(
      dir, {"generate", workspace.dir.file("data-bin"), "--path", source + ":t2r/converted", "--beam", "2"});
  require_success(ensemble);
  CHECK(contains(ensemble.err, "an ensemble of 2 models"));
  // The finetune step: train the T2R model from the converted weights (README's swap-then-finetune).
  const CommandResult finetuned =
      run_tiny_training(workspace.dir, dir.file("t2r/finetuned"),
                        {"--max-update", "2", "--finetune-from-model", dir.file("t2r/converted"), "--decoder-self-mixer",
                         "kernel:t2r+additive", "--cross-mixer", "kernel:t2r+additive", "--causal-proj-dim", "3"});
  require_success(finetuned);
  CHECK(contains(finetuned.out, "finetuning from the weights of " + dir.file("t2r/converted")));
  CHECK(contains(finetuned.out, "update 1 |"));
  CHECK(fs::exists(dir.file("t2r/finetuned/checkpoint_last.json")));

  // And back: T2R to softmax drops the feature maps.
  const CommandResult back = run_attnlab(dir, {"convert", "--from", "t2r/converted", "--output", "back",
                                               "--model-override", "decoder_self_mixer=softmax",
                                               "--model-override", "cross_mixer=softmax"});
  require_success(back);
  CHECK(contains(back.out, "new 0 tensors\n"));
  std::smatch counts;  // every parameter carried over, the tied embeddings counted once
  REQUIRE(std::regex_search(back.out, counts, std::regex(R"((\d+) of (\d+) parameters carried over)")));
  CHECK(counts[1] == counts[2]);
  CHECK(contains(back.out, "dropped 4 tensors:"));
  CHECK(attn::load_safetensors(dir.file("back.safetensors")).tensors.size() == before.tensors.size());
}

TEST_CASE("convert refuses widths and head counts that cannot map, naming the key or field and both values") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string source = workspace.dir.file("checkpoints/checkpoint_last");
  require_runtime_error(run_attnlab(dir, {"convert", "--from", source, "--output", "wide", "--model-override",
                                          "encoder_embed_dim=64", "--model-override", "decoder_embed_dim=64"}),
                        {"cannot carry 'encoder.embed_tokens.weight'", "[192, 32]", "[192, 64]"});
  require_runtime_error(run_attnlab(dir, {"convert", "--from", source, "--output", "heads", "--model-override",
                                          "decoder_attention_heads=4"}),
                        {"decoder_attention_heads is 2", "but 4"});
  require_runtime_error(run_attnlab(dir, {"convert", "--from", source, "--output", "x", "--model-override",
                                          "cross_mixer=kernel:elu+decay"}),
                        {"cross_mixer", "kernel:elu+decay", "decoder self-attention only"});
  CHECK_FALSE(fs::exists(dir.file("wide.safetensors")));
  fs::copy_file(source + ".safetensors", dir.file("own.safetensors"));
  fs::copy_file(source + ".json", dir.file("own.json"));
  const std::string own_weights = read_file(dir.file("own.safetensors"));
  require_runtime_error(run_attnlab(dir, {"convert", "--from", "own", "--output", "./own.json"}),
                        {"is also an input of convert", "writing there would lose it"});
  CHECK(read_file(dir.file("own.safetensors")) == own_weights);
}

TEST_CASE("average and convert refuse to write over a training run's state or into a running run's save dir") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  fs::copy(workspace.dir.dir / "checkpoints", dir.dir / "checkpoints");
  const std::string optimizer = dir.file("checkpoints/checkpoint_last.optimizer.safetensors");
  const std::string state = read_file(optimizer);
  const std::vector<std::vector<std::string>> over_the_run = {
      {"average", "--inputs", "checkpoints/checkpoint1", "checkpoints/checkpoint2", "--output",
       "checkpoints/checkpoint_last"},
      {"average", "--inputs", "checkpoints/checkpoint_last", "checkpoints/checkpoint2", "--output",
       "checkpoints/checkpoint_last.json"},  // one of the inputs, by another of its names
      {"convert", "--from", "checkpoints/checkpoint_last", "--output", "checkpoints/checkpoint_last"}};
  for (const std::vector<std::string>& args : over_the_run) {
    INFO(args.front());
    require_runtime_error(run_attnlab(dir, args),
                          {"checkpoints/checkpoint_last.optimizer.safetensors", "choose another --output"});
    CHECK(read_file(optimizer) == state);
  }
  {
    const attn::app::SaveDirLock training(dir.file("checkpoints"), [](const std::string&) {});  // held by this process
    require_runtime_error(run_attnlab(dir, {"average", "--inputs", "checkpoints/checkpoint1", "--output",
                                            "checkpoints/averaged"}),
                          {"running now", "train.lock", "choose another --output"});
    CHECK_FALSE(fs::exists(dir.file("checkpoints/averaged.json")));
  }
  // The run gone, a weights-only checkpoint beside its checkpoints is fine.
  require_success(
      run_attnlab(dir, {"average", "--inputs", "checkpoints/checkpoint1", "--output", "checkpoints/averaged"}));
}

TEST_CASE("translate writes one line per raw input line (--nbest N: N), an empty one for an empty one") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::vector<std::string> sources = lines_of(read_file(workspace.dir.file("raw/test.en")));
  write_file(dir.file("input.en"), joined_lines(sources, 0, 3) + "\n" + joined_lines(sources, 3, 8));
  const CommandResult translated = run_attnlab(
      dir, {"translate", "--path", workspace.dir.file("checkpoints/checkpoint_best"), "--beam", "2", "--threads", "1"},
      dir.file("input.en"));
  require_success(translated);
  const std::vector<std::string> lines = lines_of(translated.out);
  REQUIRE(lines.size() == 9);
  CHECK(lines[3].empty());
  // --nbest 2: two lines per input line, the best first (the lines above), an empty line twice.
  const CommandResult two = run_attnlab(dir,
                                        {"translate", "--path", workspace.dir.file("checkpoints/checkpoint_best"),
                                         "--beam", "2", "--nbest", "2", "--threads", "1"},
                                        dir.file("input.en"));
  require_success(two);
  const std::vector<std::string> pairs = lines_of(two.out);
  REQUIRE(pairs.size() == 18);
  for (size_t i = 0; i < lines.size(); ++i) CHECK(pairs[2 * i] == lines[i]);
  CHECK(pairs[6].empty());
  CHECK(pairs[7].empty());
  require_runtime_error(run_attnlab(dir,
                                    {"translate", "--path", workspace.dir.file("checkpoints/checkpoint_best"), "--beam",
                                     "2", "--nbest", "3"},
                                    dir.file("input.en")),
                        {"--nbest (3) > --beam (2)"});
}

TEST_CASE("train stopped at --max-update 3 and rerun to 7 ends bit-identical to one run to 7") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string split = dir.file("split"), whole = dir.file("whole");
  require_success(run_tiny_training(workspace.dir, split, {"--max-update", "3"}));
  const CommandResult resumed = run_tiny_training(workspace.dir, split, {"--max-update", "7"});
  require_success(resumed);
  CHECK(contains(resumed.out, "resumed from"));
  require_success(run_tiny_training(workspace.dir, whole, {"--max-update", "7"}));
  CHECK(read_file(split + "/checkpoint_last.safetensors") == read_file(whole + "/checkpoint_last.safetensors"));
}

TEST_CASE("train on a save dir whose checkpoints cannot be resumed stops with one error and overwrites nothing") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string save_dir = dir.file("checkpoints");
  require_success(run_tiny_training(workspace.dir, save_dir, {"--max-update", "2"}));
  const std::string best = read_file(save_dir + "/checkpoint_best.safetensors");
  for (const auto& entry : fs::directory_iterator(save_dir))
    if (entry.path().string().ends_with(".optimizer.safetensors")) fs::remove(entry.path());
  require_runtime_error(run_tiny_training(workspace.dir, save_dir, {"--max-update", "4"}),
                        {"none can be resumed", "checkpoint_last.optimizer.safetensors", "--reset-optimizer"});
  CHECK(read_file(save_dir + "/checkpoint_best.safetensors") == best);
  CHECK_FALSE(fs::exists(save_dir + "/train.lock"));
  require_success(run_tiny_training(workspace.dir, save_dir, {"--max-update", "4", "--reset-optimizer"}));
}

TEST_CASE("a save dir holds its dictionaries and BPE codes: it decodes after the data is deleted and it is moved") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;  // a copy of the workspace's data-bin/ and bpe/codes, deleted after training
  fs::copy(workspace.dir.dir / "data-bin", dir.dir / "data-bin");
  fs::create_directories(dir.dir / "bpe");
  fs::copy_file(workspace.dir.file("bpe/codes"), dir.file("bpe/codes"));
  require_success(run_tiny_training(dir, "checkpoints", {"--max-update", "2"}));
  for (const auto& [copy, original] : {std::pair<std::string, std::string>{"dict.en.txt", "data-bin/dict.en.txt"},
                                       {"dict.de.txt", "data-bin/dict.de.txt"}, {"bpecodes", "bpe/codes"}}) {
    INFO(copy);
    CHECK(read_file(dir.file("checkpoints/" + copy)) == read_file(dir.file(original)));
  }
  const nlohmann::json task = nlohmann::json::parse(read_file(dir.file("checkpoints/checkpoint_last.json")))["metadata"]["task"];
  CHECK(task["source_dict"]["file"] == "dict.en.txt");
  CHECK(task["bpe_codes"]["file"] == "bpecodes");
  require_success(run_attnlab(dir, {"average", "--inputs", "checkpoints/checkpoint_last", "checkpoints/checkpoint_best",
                                    "--output", "averaged/model"}));
  for (const char* copy : {"dict.en.txt", "dict.de.txt", "bpecodes"}) CHECK(fs::exists(dir.dir / "averaged" / copy));

  fs::remove_all(dir.dir / "data-bin");
  fs::remove_all(dir.dir / "bpe");
  fs::rename(dir.dir / "checkpoints", dir.dir / "moved");
  write_file(dir.file("input.en"), joined_lines(lines_of(read_file(workspace.dir.file("raw/test.en"))), 0, 2));
  for (const std::string path : {"moved/checkpoint_last", "averaged/model"}) {
    INFO(path);
    const CommandResult translated =
        run_attnlab(dir, {"translate", "--path", path, "--beam", "2", "--threads", "1"}, dir.file("input.en"));
    require_success(translated);
    CHECK(lines_of(translated.out).size() == 2);
  }
  require_success(run_attnlab(dir, {"validate", workspace.dir.file("data-bin"), "--path", "moved/checkpoint_last",
                                    "--threads", "1"}));
}

// --- bad input --------------------------------------------------------------------------------

TEST_CASE("a missing file is an error naming it") {
  TempDir dir;
  require_runtime_error(run_attnlab(dir, {"bpe", "apply", "-c", "no-such.codes"}), {"no-such.codes"});
  require_runtime_error(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "no-such"}),
                        {"no-such.en"});
  require_runtime_error(run_attnlab(dir, {"train", "no-such-dir", "--max-tokens", "100"}), {"no-such-dir"});
  const CommandResult no_data_no_batch_size = run_attnlab(dir, {"train", "no-such-dir"});
  require_runtime_error(no_data_no_batch_size, {"no-such-dir"});  // the data first, then the flags
  CHECK_FALSE(contains(no_data_no_batch_size.err, "--max-tokens"));
  require_runtime_error(run_attnlab(dir, {"validate", "no-such-dir", "--path", "no-such-checkpoint"}),
                        {"no-such-checkpoint"});
  require_command_line_error(run_attnlab(dir, {"score", "-r", "no-such.ref"}), "no-such.ref");
}

TEST_CASE("a data dir that is a file is named as a file, not as missing") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  for (const char* command : {"validate", "generate"}) {
    const CommandResult result = run_attnlab(
        workspace.dir, {command, "raw/test.en", "--path", "checkpoints/checkpoint2", "--threads", "1"});
    require_runtime_error(result, {"raw/test.en is a file, not a folder"});
    CHECK_FALSE(contains(result.err, "does not exist"));
  }
}

TEST_CASE("validate and generate refuse a data dir whose dictionary is not the model's") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;  // the workspace's data-bin/ with one more symbol in the German dictionary
  fs::copy(workspace.dir.dir / "data-bin", dir.dir / "data-bin");
  write_file(dir.file("data-bin/dict.de.txt"), read_file(dir.file("data-bin/dict.de.txt")) + "Zusatzwort 1\n");
  const std::string checkpoint = workspace.dir.file("checkpoints/checkpoint2");
  for (const char* command : {"validate", "generate"})
    require_runtime_error(run_attnlab(dir, {command, "data-bin", "--path", checkpoint, "--threads", "1"}),
                          {"dict.de.txt", "which the model was trained with"});
}

TEST_CASE("validate refuses to score nothing and names the sentences it skipped") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const std::vector<std::string> validate = {"validate", "data-bin", "--path", "checkpoints/checkpoint2", "--threads",
                                             "1", "--max-tokens"};
  std::vector<std::string> nothing = validate;
  nothing.push_back("1");
  const CommandResult none_scored = run_attnlab(workspace.dir, nothing);
  require_runtime_error(none_scored, {"no sentence of 'valid'", "8 pairs skipped", "alone longer than max tokens 1"});
  CHECK(none_scored.out.empty());  // no "loss 0.000 | ppl 1.00 | 0 sentences" line
  // A budget one token short of the longest pairs skips exactly those.
  auto open = [&](const char* lang) {
    return attn::data::BinarizedCorpus::open(
        attn::data::binarized_path(workspace.dir.file("data-bin"), "valid", "en", "de", lang));
  };
  const attn::data::BinarizedCorpus source = open("en"), target = open("de");
  std::vector<size_t> lengths;
  for (size_t i = 0; i < source.size(); ++i)
    lengths.push_back(std::max(source.sentence(i).size(), target.sentence(i).size()));
  const size_t longest = *std::max_element(lengths.begin(), lengths.end());
  const auto skipped = size_t(std::count(lengths.begin(), lengths.end(), longest));
  REQUIRE(skipped < lengths.size());
  std::vector<std::string> some = validate;
  some.push_back(std::to_string(longest - 1));
  const CommandResult partial = run_attnlab(workspace.dir, some);
  require_success(partial);
  CHECK(contains(partial.out, fmt::format("| {} sentences, ", lengths.size() - skipped)));
  CHECK(contains(partial.out, fmt::format("valid on 'valid' subset | {} pairs skipped ({} alone longer than max tokens {}), "
                                          "first sentence ids: {}",
                                          skipped, skipped, longest - 1,
                                          std::find(lengths.begin(), lengths.end(), longest) - lengths.begin())));
}

TEST_CASE("a model whose outputs are NaN is reported by validate, generate, translate and inspect and not printed") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  fs::copy(workspace.dir.dir / "checkpoints", dir.dir / "checkpoints");
  const std::string base = dir.file("checkpoints/checkpoint2");
  attn::app::CheckpointContent nan_model = attn::app::load_checkpoint(base, false);
  for (auto& [name, tensor] : nan_model.model)
    if (tensor.dtype() == attn::DType::Float32) tensor.fill_(std::nan(""));
  attn::app::save_checkpoint(base, nan_model);
  write_file(dir.file("input.en"), joined_lines(lines_of(read_file(workspace.dir.file("raw/test.en"))), 0, 2));
  const std::string data = workspace.dir.file("data-bin");
  require_runtime_error(run_attnlab(dir, {"validate", data, "--path", base, "--threads", "1"}),
                        {"checkpoint2", "NaN"});
  for (const char* beam : {"1", "3"}) {
    require_runtime_error(run_attnlab(dir, {"generate", data, "--path", base, "--beam", beam, "--threads", "1"}),
                          {"model produced NaN"});
    require_runtime_error(
        run_attnlab(dir, {"translate", "--path", base, "--beam", beam, "--threads", "1"}, dir.file("input.en")),
        {"model produced NaN"});
  }
  // Grey maps and heads of entropy 0 would read as a model that attends nowhere.
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--source", "The house is small.", "--target", "Das Haus ist klein."},
        std::vector<std::string>{"--data", data, "--subset", "valid"}}) {
    std::vector<std::string> args = {"inspect", "--path", base, "--out", "maps", "--threads", "1"};
    args.insert(args.end(), mode.begin(), mode.end());
    INFO(mode.front());
    require_runtime_error(
        run_attnlab(dir, args),
        {"model produced NaN (or infinite) attention weights in encoder self-attention layer 1 head 1"});
  }
  CHECK_FALSE(fs::exists(dir.file("maps")));
}

TEST_CASE("translate names the input line that is not UTF-8 or longer than the model's source positions") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::vector<std::string> translate = {"translate", "--path", workspace.dir.file("checkpoints/checkpoint_best"),
                                              "--threads", "1"};
  write_file(dir.file("bad-utf8.en"), "a good line\nbad \xff byte\n");
  require_runtime_error(run_attnlab(dir, translate, dir.file("bad-utf8.en")), {"<stdin>:2:", "invalid UTF-8 at byte 5"});
  std::string long_line;
  for (int i = 0; i < 3000; ++i) long_line += "the ";
  write_file(dir.file("long.en"), "a short line\n\n" + long_line + "\n");
  require_runtime_error(run_attnlab(dir, translate, dir.file("long.en")), {"<stdin>:3", "max_source_positions"});
}

TEST_CASE("generate names the split's file and the sentence whose source is longer than the model's positions") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  std::string long_line;
  for (int i = 0; i < 3000; ++i) long_line += "the ";
  for (const std::string lang : {"en", "de"}) write_file(dir.file("long." + lang), "a short line\n" + long_line + "\n");
  require_success(run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--testpref", "long", "--destdir", "long-bin",
                                    "--srcdict", workspace.dir.file("data-bin/dict.en.txt"), "--tgtdict",
                                    workspace.dir.file("data-bin/dict.de.txt")}));
  // It said "sentence 1: the source has ...", naming no file.
  require_runtime_error(run_attnlab(dir, {"generate", "long-bin", "--path",
                                          workspace.dir.file("checkpoints/checkpoint_best"), "--threads", "1"}),
                        {"test.en-de.en.bin: sentence 1 (S-1)", "max_source_positions"});
}

TEST_CASE("a negative or NaN or infinite --max-len-a / --max-len-b, an n-gram block of 1 or a kNN-MT option out of range is refused naming the flag") {
  TempDir dir;
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--max-len-a", "nan"}, {"--max-len-a", "-1"}, {"--max-len-a", "inf"}, {"--max-len-b", "-5"},
           {"--no-repeat-ngram-size", "1"}, {"--no-repeat-ngram-size", "-2"}, {"--no-repeat-ngram-size", "2.5"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"translate", "--path", "any", flag, value}), flag);
    require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "any", flag, value}), flag);
  }
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--knn-lambda", "1.5"}, {"--knn-lambda", "-0.1"}, {"--knn-temperature", "0"}, {"--knn-k", "0"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "any", flag, value}), flag);
  }
}

TEST_CASE("a checkpoint's model config with a size beyond its bound, a non-integer or a missing field is refused "
          "naming the field") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  fs::copy_file(workspace.dir.file("checkpoints/checkpoint2.safetensors"), dir.file("checkpoint2.safetensors"));
  const nlohmann::json good = nlohmann::json::parse(read_file(workspace.dir.file("checkpoints/checkpoint2.json")));
  const auto refused_with = [&](const std::function<void(nlohmann::json&)>& change, const std::string& problem) {
    nlohmann::json bad = good;
    change(bad["metadata"]["model_config"]);
    write_file(dir.file("checkpoint2.json"), bad.dump());
    INFO(problem);
    require_runtime_error(run_attnlab(dir, {"validate", workspace.dir.file("data-bin"), "--path", "checkpoint2",
                                            "--threads", "1"}),
                          {"checkpoint2.json", problem});
  };
  refused_with([](nlohmann::json& c) { c["encoder_layers"] = 2147483648; }, "encoder_layers must be at most 1024");
  refused_with([](nlohmann::json& c) { c["src_vocab_size"] = 1e30; }, "'src_vocab_size' must be an integer, got 1e+30");
  refused_with([](nlohmann::json& c) { c["encoder_embed_dim"] = 16.5; }, "'encoder_embed_dim' must be an integer");
  refused_with([](nlohmann::json& c) { c.erase("encoder_layers"); }, "no field 'encoder_layers'");
}

TEST_CASE("train reads its --bpe-codes at the start: a folder or a malformed line is refused naming it") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  write_file(dir.file("bad.codes"), "#version: 0.2\na b\nc\n");
  fs::create_directories(dir.dir / "codes-folder");
  for (const auto& [codes, problem] : std::vector<std::pair<std::string, std::string>>{
           {dir.file("bad.codes"), dir.file("bad.codes") + ":3"}, {dir.file("codes-folder"), "folder"}}) {
    std::vector<std::string> args = tiny_training_args("data-bin", dir.file("checkpoints"));
    args.insert(args.end(), {"--max-update", "1", "--bpe-codes", codes});
    require_runtime_error(run_attnlab(workspace.dir, args), {"--bpe-codes", problem});
    CHECK_FALSE(fs::exists(dir.file("checkpoints")));  // nothing trained, nothing copied
  }
  require_runtime_error(run_attnlab(dir, {"translate", "--path", workspace.dir.file("checkpoints/checkpoint2"),
                                          "--bpe-codes", "codes-folder"}),
                        {"codes-folder", "folder"});
}

TEST_CASE("train stops with an error naming its log when the log cannot be written") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  fs::create_directories(dir.dir / "folder/train_log.jsonl");
  require_runtime_error(run_tiny_training(workspace.dir, dir.file("folder"), {"--max-update", "1"}),
                        {"train_log.jsonl is a folder"});
  CHECK(fs::is_empty(dir.dir / "folder/train_log.jsonl"));
  fs::create_directories(dir.dir / "full");
  fs::create_symlink("/dev/full", dir.dir / "full/train_log.jsonl");  // a full disk
  require_runtime_error(run_tiny_training(workspace.dir, dir.file("full"), {"--max-update", "1"}),
                        {dir.file("full/train_log.jsonl"), "cannot write"});
}

TEST_CASE("a binarized split made with a larger dictionary than the data dir's is refused naming the file") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  fs::copy(workspace.dir.dir / "data-bin", dir.dir / "data-bin");
  const std::string split = dir.file("data-bin/valid.en-de.de.bin");
  std::string bytes = read_file(split);
  uint64_t dictionary_size = 0;
  std::memcpy(&dictionary_size, bytes.data() + 32, 8);  // the header's V: ids stay valid, outside the checksum
  dictionary_size += 100;
  bytes.replace(32, 8, reinterpret_cast<const char*>(&dictionary_size), 8);
  write_file(split, bytes);
  require_runtime_error(run_attnlab(dir, {"validate", "data-bin", "--path", workspace.dir.file("checkpoints/checkpoint2"),
                                          "--threads", "1"}),
                        {"valid.en-de.de.bin", fmt::format("dictionary of {} symbols", dictionary_size), "dict.de.txt"});
}

TEST_CASE("a malformed line is an error naming the file and the line") {
  TempDir dir;
  write_file(dir.file("bad.codes"), "#version: 0.2\na b\nc\n");
  require_runtime_error(run_attnlab(dir, {"bpe", "apply", "-c", "bad.codes"}), {"bad.codes:3"});
  write_file(dir.file("bad.dict.txt"), "hello 3\nworld\n");
  require_runtime_error(
      run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--srcdict", "bad.dict.txt", "--tgtdict",
                        "bad.dict.txt"}),
      {"bad.dict.txt:2"});
  write_file(dir.file("bad-utf8.txt"), "fine\nnot \xC3\x28 fine\n");
  require_runtime_error(run_attnlab(dir, {"tokenize", "-l", "en"}, dir.file("bad-utf8.txt")), {"<stdin>:2"});
  write_file(dir.file("uneven.en"), "one\ntwo\n");
  write_file(dir.file("uneven.de"), "eins\n");
  require_runtime_error(
      run_attnlab(dir, {"preprocess", "-s", "en", "-t", "de", "--trainpref", "uneven", "--joined-dictionary"}),
      {"uneven.en", "uneven.de"});
  CHECK_FALSE(fs::exists(dir.file("data-bin")));
}

TEST_CASE("preprocess checks every input before it writes anything") {
  TempDir dir;
  write_file(dir.file("train.en"), "one two\nthree\n");
  write_file(dir.file("train.de"), "eins zwei\ndrei\n");
  write_file(dir.file("valid.en"), "one\ntwo\n");
  write_file(dir.file("valid.de"), "eins\n");
  const std::vector<std::string> args = {"preprocess", "-s", "en", "-t", "de", "--trainpref", "train", "--destdir", "out"};
  auto with = [&](const std::vector<std::string>& more) {
    std::vector<std::string> all = args;
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  require_runtime_error(run_attnlab(dir, with({"--validpref", "valid"})), {"valid.en", "valid.de"});
  require_runtime_error(run_attnlab(dir, with({"--testpref", "no-such"})), {"no-such.en"});
  CHECK_FALSE(fs::exists(dir.file("out")));
  require_success(run_attnlab(dir, with({"--validpref", "train"})));
  CHECK(fs::exists(dir.file("out/valid.en-de.de.bin")));
}

TEST_CASE("tokenize and detokenize take any language code, as the Moses scripts do, warning where they know none") {
  TempDir dir;
  write_file(dir.file("raw.txt"), "Mr. Smith paid $5.50 for it, Dr. Who said: \"No.\" (e.g. today)\n");
  const CommandResult english = run_attnlab(dir, {"tokenize", "-l", "en"}, dir.file("raw.txt"));
  const CommandResult turkish = run_attnlab(dir, {"tokenize", "-l", "tr"}, dir.file("raw.txt"));
  require_success(english);
  require_success(turkish);
  CHECK(contains(english.out, "Mr. Smith"));  // a prefix of the English list keeps its period
  CHECK(turkish.out == english.out);           // no list for tr: the English one, and no rules of its own
  CHECK(contains(turkish.err, "no non-breaking prefix list for 'tr', using the English one"));
  CHECK_FALSE(contains(english.err, "non-breaking"));
  write_file(dir.file("tok.txt"), english.out);
  const CommandResult common = run_attnlab(dir, {"detokenize", "-l", "de"}, dir.file("tok.txt"));
  const CommandResult unknown = run_attnlab(dir, {"detokenize", "-l", "tr"}, dir.file("tok.txt"));
  require_success(common);
  require_success(unknown);
  CHECK(unknown.out == common.out);
  CHECK(contains(unknown.err, "no rules of its own for 'tr', using the common ones"));
  CHECK(common.err.empty());
}

TEST_CASE("an unknown command, flag or value is a command-line error naming it") {
  TempDir dir;
  require_command_line_error(run_attnlab(dir, {"frobnicate"}), "frobnicate");
  require_command_line_error(run_attnlab(dir, {"tokenize", "--no-such-flag"}), "--no-such-flag");
  require_command_line_error(run_attnlab(dir, {"tokenize", "-l", ""}), "-l");
  require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--beam", "0"}),
                             "--beam: must be a finite number > 0, got '0'");
  require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--lenpen", "nan"}),
                             "--lenpen: must be a finite number in [-20, 20], got 'nan'");
  require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--temperature", "inf"}),
                             "--temperature");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--max-time-minutes", "nan"}), "--max-time-minutes");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--stop-time-hours", "-1"}), "--stop-time-hours");
  require_command_line_error(
      run_attnlab(dir, {"train", "data", "--stop-time-hours", "1", "--max-time-minutes", "60"}), "excludes");
  // CLI11's own Range and PositiveNumber let NaN through: the demo then trained for ten minutes before refusing it.
  require_command_line_error(run_attnlab(dir, {"demo", "--knn-lambda", "nan"}),
                             "--knn-lambda: must be a finite number in [0, 1], got 'nan'");
  require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--knn-temperature", "nan"}),
                             "--knn-temperature");
  // A variant's name is checked before the demo's ten minutes of training, not after them.
  require_command_line_error(run_attnlab(dir, {"demo", "--compare", "--compare-only", "t2r,nosuch"}), "nosuch");
  require_command_line_error(run_attnlab(dir, {"demo", "--compare-only", "t2r"}), "--compare-only requires --compare");
  // Negative counts given to unsigned fields wrapped around to 2^64 - 1 without a word.
  require_command_line_error(run_attnlab(dir, {"clean-corpus", "c", "en", "de", "out", "-1", "80"}), "min");
  require_command_line_error(run_attnlab(dir, {"prepare", "ding", "--out", "o", "--valid-size", "-1"}), "--valid-size");
  require_command_line_error(run_attnlab(dir, {"average", "--inputs", "d", "--output", "o", "--num-update-checkpoints", "0"}),
                             "--num-update-checkpoints");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--lr-shrink", "nan"}), "--lr-shrink");
  write_file(dir.file("ref"), "a reference\n");
  require_command_line_error(run_attnlab(dir, {"score", "-r", "ref", "--smooth-value", "-1"}), "--smooth-value");
  require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--sampling-topp", "nan"}),
                             "--sampling-topp");
  for (const char* threads : {"--threads=0", "--threads=-3"})
    require_command_line_error(run_attnlab(dir, {"train", "data", "--max-tokens", "100", threads}), "--threads");
  require_command_line_error(run_attnlab(dir, {"train"}), "data");
}

TEST_CASE("train takes the variant flags: a per-layer conv/softmax encoder, a T2R decoder; the checkpoint records them") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  std::vector<std::string> args = tiny_training_args("data-bin", dir.file("variant"));
  args.insert(args.end(), {"--max-update", "2"});
  const std::vector<std::string> variant = {
      "--model-override", "encoder_layers=2", "--encoder-self-mixer", "conv,softmax", "--encoder-conv-type", "lightweight",
      "--encoder-kernel-size-list", "[5]", "--weight-dropout", "0.1", "--decoder-self-mixer", "kernel:t2r+additive",
      "--cross-mixer", "kernel:performer+additive", "--causal-proj-dim", "3", "--cross-proj-dim", "6"};
  args.insert(args.end(), variant.begin(), variant.end());
  require_success(run_attnlab(workspace.dir, args));
  const nlohmann::json metadata = nlohmann::json::parse(read_file(dir.file("variant/checkpoint_last.json")));
  const nlohmann::json& config = metadata.at("metadata").at("model_config");
  CHECK(config.at("encoder_self_mixer") == "conv,softmax");
  CHECK(config.at("decoder_self_mixer") == "kernel:t2r+additive");
  CHECK(config.at("mixer_options").at("encoder_kernel_size_list") == nlohmann::json::array({5}));
  CHECK(config.at("mixer_options").at("causal_proj_dim") == 3);
  const attn::SafetensorsFile weights = attn::load_safetensors(dir.file("variant/checkpoint_last.safetensors"));
  CHECK(weights.at("encoder.layers.0.conv.weight").shape() == attn::Shape({2, 1, 5}));
  CHECK(weights.at("encoder.layers.1.self_attn.q_proj.weight").shape() == attn::Shape({32, 32}));
  CHECK(weights.at("decoder.layers.0.self_attn.fc3.weight").shape() == attn::Shape({2 * 3, 16}));
  CHECK(weights.at("decoder.layers.0.encoder_attn.random_matrices").shape() == attn::Shape({2, 6, 16}));
  require_success(run_attnlab(workspace.dir, {"generate", "data-bin", "--path", dir.file("variant/checkpoint_last"),
                                              "--beam", "2", "--threads", "1"}));
}

TEST_CASE("an unknown model preset, token mixer or config value is an error naming it") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const auto train_with = [&](const std::vector<std::string>& model_flags) {
    std::vector<std::string> args = {"train", "data-bin", "--save-dir", dir.file("checkpoints"), "--max-tokens", "512"};
    args.insert(args.end(), model_flags.begin(), model_flags.end());
    return run_attnlab(workspace.dir, args);
  };
  require_runtime_error(train_with({"--arch", "no_such_arch"}), {"no_such_arch"});
  // A model flag's value is checked with the command line, naming the flag.
  require_command_line_error(train_with({"--encoder-self-mixer", "no_such_mixer"}),
                             "--encoder-self-mixer: unknown or unsupported mixer 'no_such_mixer'");
  require_command_line_error(train_with({"--encoder-layers", "many"}), "--encoder-layers: must be an integer, got 'many'");
  require_runtime_error(train_with({"--model-override", "no_such_key=1"}), {"no_such_key"});
  CHECK_FALSE(fs::exists(dir.file("checkpoints")));
}

TEST_CASE("a corrupt checkpoint is an error naming its file, for every command that loads one") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;  // a copy of checkpoint_last (its JSON names its tensor files)
  for (const char* extension : {".safetensors", ".optimizer.safetensors", ".json"})
    fs::copy_file(workspace.dir.file(std::string("checkpoints/checkpoint_last") + extension),
                  dir.file(std::string("checkpoint_last") + extension));
  const std::string data = workspace.dir.file("data-bin");
  const std::string weights = dir.file("checkpoint_last.safetensors"), metadata = dir.file("checkpoint_last.json");
  // The commands that build the model from the checkpoint, and `average`, which reads only its tensor files.
  const std::vector<std::vector<std::string>> model_loaders = {{"validate", data, "--path", "checkpoint_last"},
                                                               {"generate", data, "--path", "checkpoint_last"},
                                                               {"translate", "--path", "checkpoint_last"}};
  const std::vector<std::string> average = {"average", "--inputs", "checkpoint_last", "checkpoint_last", "--output",
                                            "averaged"};
  const auto require_failures = [&](const std::vector<std::vector<std::string>>& commands,
                                    const std::vector<std::string>& names) {
    for (const std::vector<std::string>& args : commands) {
      INFO(args.front());
      require_runtime_error(run_attnlab(dir, args), names);
    }
  };
  const auto require_every_loader_fails = [&](const std::string& file) {
    require_failures(model_loaders, {file});
    require_failures({average}, {file});
  };

  SECTION("truncated weights") {
    const std::string bytes = read_file(weights);
    write_file(weights, bytes.substr(0, bytes.size() / 2));
    require_every_loader_fails("checkpoint_last.safetensors");
  }
  SECTION("weights with a flipped byte") {
    std::string bytes = read_file(weights);
    bytes[bytes.size() - 1] ^= 0x55;
    write_file(weights, bytes);
    require_every_loader_fails("checkpoint_last.safetensors");
  }
  SECTION("metadata cut short") {
    const std::string json = read_file(metadata);
    write_file(metadata, json.substr(0, json.size() / 2));
    require_every_loader_fails("checkpoint_last.json");
  }
  SECTION("metadata without the task (average needs only the weights)") {
    nlohmann::json json = nlohmann::json::parse(read_file(metadata));
    REQUIRE(json["metadata"].erase("task") == 1);
    write_file(metadata, json.dump());
    require_failures(model_loaders, {"checkpoint_last.json", "task"});
    require_success(run_attnlab(dir, average));
  }
}

// --- seeing inside: inspect, plot ------------------------------------------------------------

namespace {

// Width and height from a PNG's IHDR chunk (bytes 16–23, big-endian); fails when the bytes are
// not a PNG.
std::pair<uint32_t, uint32_t> png_size(const std::string& bytes) {
  REQUIRE(bytes.size() > 24);
  REQUIRE(bytes.substr(0, 8) == "\x89PNG\r\n\x1a\n");
  const auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = v << 8 | uint8_t(bytes[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

}  // namespace

TEST_CASE("inspect --source writes every head's map as a PNG and the numbers as JSON") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  for (const bool forced : {true, false}) {
    std::vector<std::string> args = {"inspect", "--path", workspace.dir.file("checkpoints/checkpoint_last"),
                                     "--source", "The house is small.", "--out", "maps", "--threads", "1"};
    if (forced) args.insert(args.end(), {"--target", "Das Haus ist klein."});
    const CommandResult inspected = run_attnlab(dir, args);
    require_success(inspected);
    const nlohmann::json j = nlohmann::json::parse(read_file(dir.file("maps/attention.json")));
    const auto source = j["source"].get<std::vector<std::string>>();
    const auto input = j["decoder_input"].get<std::vector<std::string>>();
    const auto output = j["decoder_output"].get<std::vector<std::string>>();
    INFO(inspected.out);
    CHECK(source.back() == "</s>");
    CHECK(output.back() == "</s>");
    REQUIRE(input.size() == output.size());
    CHECK(input.front() == "</s>");  // the decoder reads the target shifted right
    CHECK(std::equal(output.begin(), output.end() - 1, input.begin() + 1));
    for (const char* place : {"encoder_self", "decoder_self", "cross"}) {
      const nlohmann::json& maps = j["places"][place]["maps"];
      REQUIRE(maps.size() == 1);     // one layer
      REQUIRE(maps[0].size() == 2);  // two heads
      const size_t queries = std::string(place) == "encoder_self" ? source.size() : output.size();
      const size_t keys = std::string(place) == "decoder_self" ? input.size() : source.size();
      for (int head = 0; head < 2; ++head) {
        const auto rows = maps[0][head].get<std::vector<std::vector<double>>>();
        REQUIRE(rows.size() == queries);
        for (size_t i = 0; i < queries; ++i) {
          REQUIRE(rows[i].size() == keys);
          double total = 0;
          for (size_t k = 0; k < keys; ++k) total += rows[i][k];
          CHECK(total == Approx(1.0).margin(1e-5));  // softmax rows
          if (std::string(place) == "decoder_self")
            for (size_t k = i + 1; k < keys; ++k) CHECK(rows[i][k] == 0.0);  // nothing from the future
        }
        const auto [width, height] =
            png_size(read_file(dir.file(fmt::format("maps/{}-layer1-head{}.png", place, head + 1))));
        if (forced) {  // short: full-size cells (22 px) beside the labels (the free translation may be long)
          CHECK(width > 22 * keys + 40);
          CHECK(height > 22 * queries + 40);
        }
      }
    }
    std::string target;  // the subwords joined, BPE removed
    for (const std::string& token : output) target += token + " ";
    target = std::regex_replace(target, std::regex("@@ "), "");
    if (forced) CHECK(target == "Das Haus ist klein . </s> ");
    else CHECK(contains(inspected.out, "the model's translation"));
  }
}

TEST_CASE("inspect removes from --out the files of an earlier inspect that it did not rewrite, and nothing else") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  fs::create_directories(dir.dir / "maps");
  // A model of more layers had drawn layer 6; the notes and the backup are the user's.
  for (const char* file : {"cross-layer6-head8.png", "statistics.json", "notes.txt", "cross-layer1-head1.png.orig"})
    write_file(dir.file(std::string("maps/") + file), "an earlier run's\n");
  const std::vector<std::string> inspect = {"inspect", "--path", workspace.dir.file("checkpoints/checkpoint_last"),
                                            "--out", "maps", "--threads", "1"};
  std::vector<std::string> sentence = inspect;
  sentence.insert(sentence.end(), {"--source", "The house is small.", "--target", "Das Haus ist klein."});
  const CommandResult maps = run_attnlab(dir, sentence);
  require_success(maps);
  CHECK(contains(maps.out, "removed 2 files of an earlier inspect from maps/"));
  CHECK_FALSE(fs::exists(dir.file("maps/cross-layer6-head8.png")));
  CHECK_FALSE(fs::exists(dir.file("maps/statistics.json")));
  for (const char* kept : {"notes.txt", "cross-layer1-head1.png.orig", "cross-layer1-head2.png", "attention.json"})
    CHECK(fs::exists(dir.file(std::string("maps/") + kept)));
  std::vector<std::string> corpus = inspect;
  corpus.insert(corpus.end(), {"--data", workspace.dir.file("data-bin"), "--subset", "valid"});
  const CommandResult statistics = run_attnlab(dir, corpus);
  require_success(statistics);
  CHECK(contains(statistics.out, "removed 7 files"));  // 3 places × 1 layer × 2 heads, and attention.json
  CHECK(fs::exists(dir.file("maps/statistics.json")));
  CHECK_FALSE(fs::exists(dir.file("maps/cross-layer1-head2.png")));
  CHECK(fs::exists(dir.file("maps/notes.txt")));
}

TEST_CASE("inspect --data prints per-head statistics; a model is at distance 0 from itself and not from another") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string last = workspace.dir.file("checkpoints/checkpoint_last"),
                    first = workspace.dir.file("checkpoints/checkpoint1");
  for (const std::string& teacher : {last, first}) {
    const CommandResult inspected =
        run_attnlab(dir, {"inspect", "--path", last, "--data", workspace.dir.file("data-bin"), "--subset", "valid",
                          "--compare-to", teacher, "--out", "stats", "--threads", "1"});
    require_success(inspected);
    CHECK(contains(inspected.out, "8 sentences"));
    const nlohmann::json j = nlohmann::json::parse(read_file(dir.file("stats/statistics.json")));
    CHECK(j["sentences"] == 8);
    for (const char* place : {"encoder_self", "decoder_self", "cross"})
      for (const nlohmann::json& head : j["places"][place][0]) {
        INFO(place << " " << head.dump());
        CHECK(head["entropy"].get<double>() > 0.1);  // an early model spreads its attention
        if (std::string(place) == "cross") CHECK(head["distance"].is_null());
        else CHECK(head["distance"].get<double>() > 0.1);
        if (teacher == last) CHECK(head["to_teacher"].get<double>() == 0.0);
        else CHECK(head["to_teacher"].get<double>() > 1e-4);
      }
  }
  require_runtime_error(run_attnlab(dir, {"inspect", "--path", last, "--out", "x"}), {"--source", "--data"});
}

TEST_CASE("a run's last done record holds its peak memory, and a rerun that trains nothing keeps it") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  const std::string run = workspace.dir.file("memory_run");
  require_success(run_tiny_training(workspace.dir, run, {"--max-update", "2"}));
  const nlohmann::json trained = attn::app::last_training_summary(run);
  CHECK(trained.value("update", 0) == 2);
  CHECK(trained.value("peak_tensor_mib", 0.0) > 0.0);
  CHECK(trained.value("peak_resident_mib", 0.0) > trained.value("peak_tensor_mib", 0.0));
  const auto done_records = [&] {
    std::vector<nlohmann::json> done;
    std::istringstream log(read_file(run + "/train_log.jsonl"));
    for (std::string line; std::getline(log, line);)
      if (nlohmann::json record = nlohmann::json::parse(line); record.value("type", "") == "done") done.push_back(record);
    return done;
  };
  CHECK(done_records().size() == 1);
  require_success(run_tiny_training(workspace.dir, run, {"--max-update", "2"}));  // finds training done
  const std::vector<nlohmann::json> records = done_records();
  REQUIRE(records.size() == 2);
  CHECK(records.back().value("tokens_per_second", -1.0) == 0.0);  // the idle rerun's record
  CHECK(attn::app::last_training_summary(run) == trained);
}

TEST_CASE("inverse_sqrt without --warmup-updates warms up over fairseq's 4000 updates") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const auto logged_lrs = [&](const std::string& run, const std::vector<std::string>& warmup) {
    std::vector<std::string> args = {"train", "data-bin", "--save-dir", run};
    for (size_t i = 0; i < kTinyTraining.size(); ++i) {
      if (kTinyTraining[i] == "--warmup-updates") ++i;  // and its value
      else args.push_back(kTinyTraining[i]);
    }
    args.insert(args.end(), {"--max-update", "3", "--no-epoch-checkpoints"});
    args.insert(args.end(), warmup.begin(), warmup.end());
    require_success(run_attnlab(workspace.dir, args));
    std::vector<double> lrs;
    std::istringstream log(read_file(run + "/train_log.jsonl"));
    for (std::string line; std::getline(log, line);)
      if (nlohmann::json record = nlohmann::json::parse(line); record.value("type", "") == "train")
        lrs.push_back(record.at("lr").get<double>());
    return lrs;
  };
  const std::vector<double> unset = logged_lrs(dir.file("unset"), {});
  REQUIRE(unset.size() == 3);
  CHECK(unset == logged_lrs(dir.file("explicit"), {"--warmup-updates", "4000"}));
  CHECK(unset.back() == Approx(2 * 0.003 / 4000));  // update 3 runs at lr_at(2) of a warmup from 0
  // A list of rates (one per epoch) is for the fixed schedule only, as in fairseq.
  std::vector<std::string> listed = tiny_training_args("data-bin", dir.file("listed"));
  *(std::find(listed.begin(), listed.end(), "--lr") + 1) = "0.001,0.002";
  listed.insert(listed.end(), {"--max-update", "1"});
  require_runtime_error(run_attnlab(workspace.dir, listed), {"only --lr-scheduler fixed or polynomial_decay reads", "inverse_sqrt"});
}

TEST_CASE("plot draws the runs' curves as a PNG, and names the line of a broken log") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const std::string run = workspace.dir.file("checkpoints");
  require_success(run_attnlab(dir, {"plot", run, run, "--label", "a", "--label", "b", "--out", "curves.png",
                                    "--metrics", "loss,ppl,lr", "--columns", "3"}));
  const auto [width, height] = png_size(read_file(dir.file("curves.png")));
  CHECK(width == 3 * 460);
  CHECK(height > 300);
  fs::create_directories(dir.dir / "broken");
  const std::string log = read_file(run + "/train_log.jsonl");
  const size_t lines = size_t(std::count(log.begin(), log.end(), '\n')) + 1;  // the broken record's line
  write_file(dir.file("broken/train_log.jsonl"), log + "{\"type\": \"train\"\n");
  require_runtime_error(run_attnlab(dir, {"plot", "broken", "--out", "b.png"}),
                        {fmt::format("train_log.jsonl:{}", lines), "not a JSON record"});
  require_runtime_error(run_attnlab(dir, {"plot", run, "--out", "c.png", "--metrics", "bleu"}), {"unknown metric 'bleu'"});
  require_runtime_error(run_attnlab(dir, {"plot", run, "--out", "c.png", "--metrics", "loss,lr,loss"}),
                        {"--metrics names loss twice"});
}

TEST_CASE("the demo's report page holds the run's curves, its examples and every head's map of the chosen pairs") {
  const TrainingWorkspace& workspace = TrainingWorkspace::get();
  TempDir dir;
  const size_t bytes = attn::app::write_demo_report(
      {.title = "demo & test",
       .headline = "sacreBLEU 1.0",
       .facts = {{"updates", "16"}},
       .examples = {{"The house is small.", "Das Haus ist klein.", "Das <Haus>"}},
       .train_log = workspace.dir.file("checkpoints/train_log.jsonl"),
       .run_name = "transformer_tiny",
       .checkpoint = workspace.dir.file("checkpoints/checkpoint_last"),
       .attention_pairs = {{"The house is small.", "Das Haus ist klein."}, {"Yes.", "Ja."}},
       .tables = {},
       .extra_attention = {}},
      dir.file("report.html"));
  const std::string html = read_file(dir.file("report.html"));
  CHECK(html.size() == bytes);
  size_t images = 0;
  for (size_t at = html.find("<img "); at != std::string::npos; at = html.find("<img ", at + 1)) ++images;
  CHECK(images == 2 + 2 * 3 * 2);  // curves against updates and minutes; 2 pairs × 3 places × 1 layer × 2 heads
  CHECK(contains(html, "<h1>demo &amp; test</h1>"));
  CHECK(contains(html, "Das &lt;Haus&gt;"));
  CHECK(contains(html, "The house is small.  →  Das Haus ist klein."));
  CHECK(contains(html, "<details open><summary>cross-attention"));
}
