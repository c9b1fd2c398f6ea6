// `attnlab prepare ding`: writes the Ding EN-DE teaching corpus (data/ding_corpus.hpp) as
// plain train/valid/test .en/.de files.
#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "data/ding_corpus.hpp"

namespace attn::app {
namespace {

struct PrepareDingOptions {
  std::string input = data::kDingDefaultPath;
  std::string out_dir;
  uint64_t seed = 1;
  size_t valid_size = 1000, test_size = 1000;
};

int run_prepare_ding(const PrepareDingOptions& options) {
  std::vector<data::SentencePair> pairs = data::read_ding_sentence_pairs(options.input);
  size_t total = pairs.size();
  data::CorpusSplit split = data::split_corpus(std::move(pairs), options.seed, options.valid_size, options.test_size);
  data::write_corpus_split(split, options.out_dir);
  std::cout << fmt::format("ding: {} sentence pairs from {} -> {}: train {}, valid {}, test {}\n", total,
                           options.input, options.out_dir, split.train.size(), split.valid.size(),
                           split.test.size());
  return 0;
}

CommandRegistration prepare_command(
    "prepare", "Build a ready-to-use parallel corpus (ding: EN-DE sentences of the Ding dictionary)",
    [](CLI::App& cmd) -> CommandAction {
      cmd.require_subcommand(1);
      auto options = std::make_shared<PrepareDingOptions>();
      CLI::App* ding = cmd.add_subcommand(
          "ding", "EN-DE sentence pairs from Debian's trans-de-en (Ding dictionary): train/valid/test .en/.de");
      ding->add_option("--input", options->input, "Ding dictionary file (package trans-de-en)")->capture_default_str();
      ding->add_option("--out", options->out_dir, "Output directory")->required();
      add_integer_option(*ding, "--seed", options->seed, "Seed of the train/valid/test split")->capture_default_str();
      add_integer_option(*ding, "--valid-size", options->valid_size, "Pairs in valid")->capture_default_str();
      add_integer_option(*ding, "--test-size", options->test_size, "Pairs in test")->capture_default_str();
      return [options] { return run_prepare_ding(*options); };
    });

}  // namespace
}  // namespace attn::app
