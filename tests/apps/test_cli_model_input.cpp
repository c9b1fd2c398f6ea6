// Bad input to the model commands that needs no trained model (tests/apps/test_cli.cpp has the
// ones that do): a model configuration too large to build, batch, search and schedule flags
// out of range, a non-integer for an integer flag, a mixer its place cannot take and an empty
// inspect --target, each refused at once naming the field or the flag — never hours of
// building layers, nor a value silently taken as another. And inspect's own checks on models
// trained for one update: its files written all or none, what --max-tokens left out, a teacher
// of other dictionaries or languages.
#include <catch.hpp>

#include <filesystem>
#include <map>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "synthetic_corpus.hpp"

using namespace attn::test;
namespace fs = std::filesystem;

TEST_CASE("a layer count or model size beyond its bound is refused naming the field and the bound") {
  TempDir dir;
  for (const char* layers : {"encoder_layers=2147483648", "encoder_layers=100000000", "decoder_layers=99999999999"}) {
    INFO(layers);
    require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override", layers}),
                          {"layers must be at most 1024"});
  }
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--vocab", "100000000000"}),
                        {"src_vocab_size must be at most 16777216"});
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override",
                                          "max_target_positions=1000000000"}),
                        {"max_target_positions must be at most 16777216"});
  // Every size within its bound, the whole beyond what can be built: refused before allocating it.
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override",
                                          "encoder_ffn_embed_dim=16777216", "--model-override",
                                          "decoder_ffn_embed_dim=16777216"}),
                        {"more than the 4.29e+09 this toolkit builds"});
  require_success(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override", "encoder_layers=12"}));
}

TEST_CASE("a batch size, search or schedule flag out of range is a command-line error naming the flag") {
  TempDir dir;
  const std::vector<std::vector<std::string>> decoders = {
      {"generate", "data", "--path", "ckpt"}, {"translate", "--path", "ckpt"}, {"validate", "data", "--path", "ckpt"}};
  for (const std::vector<std::string>& command : decoders)
    for (const char* flag : {"--batch-size", "--max-tokens"})
      for (const char* value : {"0", "-1"}) {
        std::vector<std::string> args = command;
        args.insert(args.end(), {flag, value});
        INFO(args.front() << " " << flag << " " << value);
        // validate names its batch flag --max-sentences first, as fairseq-validate does
        require_command_line_error(run_attnlab(dir, args),
                                   args.front() == "validate" && std::string(flag) == "--batch-size" ? "--max-sentences"
                                                                                                   : flag);
      }
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--min-len", "-1"}, {"--nbest", "0"}, {"--sampling-topk", "0"}, {"--sampling-topk", "-5"},
           {"--sampling-topp", "0"}, {"--sampling-topp", "-0.5"}, {"--sampling-topp", "1.5"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--sampling", flag, value}),
                               flag);
  }
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--max-tokens", "0"}, {"--max-tokens", "-1"}, {"--max-sentences", "0"}, {"--lr-period-updates", "0"},
           {"--lr-period-updates", "-5"}, {"--warmup-init-lr", "-5"}, {"--adam-eps", "inf"}, {"--adam-eps", "0"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"train", "data", "--lr-scheduler", "cosine", flag, value}), flag);
  }
  // -1, the documented "unset", is still taken: these fail on the missing data, not on the flag.
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--lr-period-updates", "-1"}, {"--warmup-init-lr", "-1"}})
    require_runtime_error(run_attnlab(dir, {"train", "no-such-data", "--max-tokens", "100", flag, value}),
                          {"no-such-data"});
  require_runtime_error(run_attnlab(dir, {"generate", "data", "--path", "no-such-ckpt", "--sampling", "--sampling-topk",
                                          "-1", "--sampling-topp", "-1"}),
                        {"no-such-ckpt"});
}

TEST_CASE("a non-integer given to an integer flag is a command-line error saying the flag must be an integer") {
  TempDir dir;
  // The model flags became config overrides read after the data: "config: 'encoder_layers'
  // expects a number, got '1.5'"; the others read "Could not convert: --update-freq = 1.5".
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--encoder-layers", "1.5"}, {"--decoder-embed-dim", "1e3"}, {"--update-freq", "1.5"},
           {"--max-tokens", "100.5"}, {"--log-interval", "ten"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"train", "data", flag, value}),
                               flag + ": must be an integer, got '" + value + "'");
  }
  require_command_line_error(run_attnlab(dir, {"train", "data", "--dropout", "0.x"}),
                             "--dropout: must be a number, got '0.x'");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--encoder-kernel-size-list", "[3,x]"}),
                             "--encoder-kernel-size-list: must be a list of integers");
  require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--beam", "1.5"}),
                             "--beam: must be an integer, got '1.5'");
  // An unsigned flag read "-1" as 2^64 - 1 and trained with that seed.
  require_command_line_error(run_attnlab(dir, {"train", "data", "--seed", "-1"}),
                             "--seed: must be a non-negative integer, got '-1'");
}

TEST_CASE("a mixer kind its place cannot take is refused naming the mixer flag, or the field of an override") {
  TempDir dir;
  // An unknown rule in decoder self-attention surfaced only when the model was built, naming nothing.
  require_command_line_error(run_attnlab(dir, {"train", "data", "--decoder-self-mixer", "kernel:t2r+nope"}),
                             "--decoder-self-mixer: unknown update rule 'nope'");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--cross-mixer", "softmax,conv"}),
                             "--cross-mixer: unknown or unsupported mixer 'conv'");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--decoder-self-mixer", "linformer"}),
                             "--decoder-self-mixer: linformer cannot be causal");
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override",
                                          "decoder_self_mixer=kernel:t2r+nope"}),
                        {"config: decoder_self_mixer: unknown update rule 'nope'"});
}

TEST_CASE("inspect refuses an empty --target, --source, --data or --path instead of taking it as left out") {
  TempDir dir;
  // An empty --target decoded the model's own translation, as if there were none.
  require_command_line_error(
      run_attnlab(dir, {"inspect", "--path", "ckpt", "--source", "a sentence", "--target", "", "--out", "maps"}),
      "--target: is empty");
  require_command_line_error(
      run_attnlab(dir, {"inspect", "--path", "ckpt", "--source", "", "--data", ".", "--out", "maps"}),
      "--source: is empty");
  require_command_line_error(run_attnlab(dir, {"inspect", "--path", "ckpt", "--data", "", "--out", "maps"}),
                             "--data: is empty");
  require_runtime_error(run_attnlab(dir, {"inspect", "--path", "", "--source", "a", "--out", "maps"}),
                        {"a checkpoint path is empty"});
}

namespace {

// Models for inspect's checks of its input and output, which need none that translates: the
// tiny Transformer trained for one update on the synthetic reversal task (synthetic_corpus.hpp,
// words w0..w15), in `model`; the same on 17 words (another dictionary) in `other_dictionary`
// and from tgt to src in `other_direction`. `codes`: BPE codes that make w0..w9 of raw text.
struct OneUpdateModels {
  TempDir dir;
  std::string data = dir.file("data"), codes = dir.file("codes"), model, other_dictionary, other_direction;

  static const OneUpdateModels& get() {
    static const OneUpdateModels models;
    return models;
  }

 private:
  OneUpdateModels() {
    fs::create_directories(data);
    attn::app::testing::write_reversal_corpus(data);
    fs::create_directories(dir.file("data17"));
    attn::app::testing::write_reversal_corpus(dir.file("data17"), 17);
    std::string merges = "#version: 0.2\n";
    for (int digit = 0; digit < 10; ++digit) merges += fmt::format("w {}</w>\n", digit);
    write_file(codes, merges);
    model = trained(data, "model", {});
    other_dictionary = trained(dir.file("data17"), "model17", {});
    other_direction = trained(reversed_copy(), "reversed", {"-s", "tgt", "-t", "src"});
  }

  // The data as a tgt-src pair (the files of a pair carry its name: train.tgt-src.src.bin).
  std::string reversed_copy() {
    const std::string reversed = dir.file("data-reversed");
    fs::create_directories(reversed);
    for (const fs::directory_entry& entry : fs::directory_iterator(data)) {
      std::string name = entry.path().filename().string();
      if (const size_t pair = name.find("src-tgt"); pair != std::string::npos) name.replace(pair, 7, "tgt-src");
      fs::copy_file(entry.path(), fs::path(reversed) / name);
    }
    return reversed;
  }

  std::string trained(const std::string& data_dir, const std::string& name, const std::vector<std::string>& flags) {
    std::vector<std::string> args = attn::app::testing::tiny_training_command(ATTNLAB_BINARY, data_dir, dir.file(name));
    args.erase(args.begin());  // run_attnlab names the binary itself
    args.insert(args.end(), {"--max-update", "1"});
    args.insert(args.end(), flags.begin(), flags.end());
    require_success(run_attnlab(dir, args));
    return dir.file(name + "/checkpoint_last");
  }
};

// `inspect --path MODEL --out DIR` with `more` flags, on one thread.
CommandResult run_inspect(const TempDir& dir, const std::string& model, const std::string& out,
                          const std::vector<std::string>& more) {
  std::vector<std::string> args = {"inspect", "--path", model, "--out", out, "--threads", "1"};
  args.insert(args.end(), more.begin(), more.end());
  return run_attnlab(dir, args);
}

// Every entry of a folder, temp files included: a file's name and bytes, a folder's name and "/".
std::map<std::string, std::string> folder_contents(const std::string& folder) {
  std::map<std::string, std::string> contents;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder))
    contents[entry.path().filename().string()] = entry.is_directory() ? "/" : read_file(entry.path().string());
  return contents;
}

}  // namespace

TEST_CASE("inspect refuses an empty --out and a --source or --target without a word, naming the flag") {
  TempDir dir;
  // An empty --out wrote the maps into the current folder, then failed on a directory iterator of "".
  require_command_line_error(run_attnlab(dir, {"inspect", "--path", "ckpt", "--source", "a sentence", "--out", ""}),
                             "--out: is empty");
  // White space became a sentence of </s> alone.
  for (const std::string flag : {"--source", "--target"})
    for (const char* blank : {"   ", " \t\n", "\u00a0\u3000"}) {
      INFO(flag << " '" << blank << "'");
      require_command_line_error(
          run_attnlab(dir, {"inspect", "--path", "ckpt", "--source", "a sentence", flag, blank, "--out", "maps"}),
          flag + ": is only white space");
    }
  // What the tokenizer leaves nothing of is found once it has run.
  const OneUpdateModels& models = OneUpdateModels::get();
  require_runtime_error(
      run_inspect(dir, models.model, "maps", {"--bpe-codes", models.codes, "--source", "w1", "--target", "\x01\x02"}),
      {"--target has no word once tokenized"});
  CHECK_FALSE(fs::exists(dir.file("maps")));
}

TEST_CASE("inspect writes all its files or none: a failure leaves the earlier run's files as they were") {
  const OneUpdateModels& models = OneUpdateModels::get();
  TempDir dir;
  const auto inspect = [&](std::vector<std::string> more) {
    more.insert(more.end(), {"--bpe-codes", models.codes});
    return run_inspect(dir, models.model, "maps", more);
  };
  require_success(inspect({"--source", "w1 w2 w3", "--target", "w3 w2 w1"}));
  // A folder in one map's place was found after some of the next sentence's maps were written,
  // and left them beside the first sentence's attention.json.
  fs::remove(dir.file("maps/cross-layer1-head2.png"));
  fs::create_directory(dir.file("maps/cross-layer1-head2.png"));
  const std::map<std::string, std::string> first = folder_contents(dir.file("maps"));
  REQUIRE(first.size() == 7);  // 3 places × 2 heads, attention.json
  require_runtime_error(inspect({"--source", "w4 w5", "--target", "w5 w4"}),
                        {"maps/cross-layer1-head2.png: is a folder, not a file"});
  CHECK(folder_contents(dir.file("maps")) == first);
  // The maps were written before the statistics of the same run failed.
  fs::remove(dir.file("maps/cross-layer1-head2.png"));
  const std::map<std::string, std::string> unchanged = folder_contents(dir.file("maps"));
  require_runtime_error(
      inspect({"--source", "w4 w5", "--target", "w5 w4", "--data", models.data, "--max-tokens", "1"}),
      {"--max-tokens 1"});
  CHECK(folder_contents(dir.file("maps")) == unchanged);
  require_success(inspect({"--source", "w4 w5", "--target", "w5 w4"}));
  const nlohmann::json j = nlohmann::json::parse(read_file(dir.file("maps/attention.json")));
  CHECK(j["source"] == std::vector<std::string>{"w4", "w5", "</s>"});
  CHECK(folder_contents(dir.file("maps")).size() == 7);
}

TEST_CASE("inspect --data says how many sentences --max-tokens left out, on the terminal and in statistics.json") {
  const OneUpdateModels& models = OneUpdateModels::get();
  TempDir dir;
  // The test split: 8 pairs of 2 to 7 words and </s>. 97 of 1,000 sentences were counted silently.
  const CommandResult some = run_inspect(dir, models.model, "stats", {"--data", models.data, "--max-tokens", "5"});
  require_success(some);
  const nlohmann::json j = nlohmann::json::parse(read_file(dir.file("stats/statistics.json")));
  const int64_t counted = j["sentences"], skipped = j["skipped"]["sentences"];
  REQUIRE(counted > 0);
  REQUIRE(skipped > 0);
  CHECK(counted + skipped == 8);
  CHECK(j["skipped"]["over_max_tokens"] == skipped);
  CHECK(j["skipped"]["over_positions"] == 0);
  CHECK(j["skipped"]["max_tokens"] == 5);
  CHECK(contains(some.out, fmt::format("{} of 8 sentences of {} 'test' ({} skipped: {} with more than --max-tokens 5 "
                                       "tokens on a side)",
                                       counted, models.data, skipped, skipped)));
  // None left: the message blamed the model's positions.
  const CommandResult none = run_inspect(dir, models.model, "stats", {"--data", models.data, "--max-tokens", "1"});
  require_runtime_error(none, {"no sentence of", "(8 skipped: 8 with more than --max-tokens 1 tokens on a side)"});
  CHECK_FALSE(contains(none.err, "positions"));
}

TEST_CASE("inspect --compare-to names the teacher whose dictionary or languages differ, and both dictionaries") {
  const OneUpdateModels& models = OneUpdateModels::get();
  TempDir dir;
  const auto compared_to = [&](const std::string& teacher) {
    return run_inspect(dir, models.model, "stats", {"--data", models.data, "--compare-to", teacher});
  };
  // It said "dictionary DATA/dict.src.txt differs from TEACHER/dict.src.txt, which the model was trained with".
  const std::string teacher_folder = fs::path(models.other_dictionary).parent_path().string(),
                    model_folder = fs::path(models.model).parent_path().string();
  require_runtime_error(compared_to(models.other_dictionary),
                        {fmt::format("the teacher (--compare-to {}) has the dictionary {}/dict.src.txt, which differs "
                                     "from the model's {}/dict.src.txt (--path {})",
                                     models.other_dictionary, teacher_folder, model_folder, models.model)});
  // The same dictionary on the other side: it read the sentences the wrong way round.
  require_runtime_error(compared_to(models.other_direction),
                        {fmt::format("the teacher (--compare-to {}) translates tgt-src, the model (--path {}) src-tgt",
                                     models.other_direction, models.model)});
  CHECK_FALSE(fs::exists(dir.file("stats")));
}
