// `attnlab clean-corpus [--ratio R] CORPUS L1 L2 OUT MIN MAX`: Moses clean-corpus-n.perl
// (docs/mt-tools.md §2.5): keeps the pairs of CORPUS.L1/.L2 with MIN..MAX words per side and
// a word ratio of at most R, writes OUT.L1/.L2 and reports kept/dropped counts on stderr.
#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "data/clean_corpus.hpp"

namespace attn::app {
namespace {

struct CleanCorpusArguments {
  std::string corpus, l1, l2, out;
  data::CleanCorpusOptions options;
};

int run_clean_corpus(const CleanCorpusArguments& args) {
  const auto report = data::clean_corpus(args.corpus, args.l1, args.l2, args.out, args.options);
  std::cerr << fmt::format(
      "clean-corpus: {}.{{{},{}}} -> {}.{{{},{}}}: {} pairs in, {} kept, {} dropped "
      "(empty {}, outside {}-{} words {}, ratio > {} {}, word > {} characters {})\n",
      args.corpus, args.l1, args.l2, args.out, args.l1, args.l2, report.input_pairs, report.kept_pairs,
      report.dropped_pairs(), report.empty, args.options.min_words, args.options.max_words, report.out_of_length,
      args.options.max_ratio, report.over_ratio, args.options.max_word_length, report.long_word);
  return 0;
}

CommandRegistration clean_corpus_command(
    "clean-corpus", "Moses clean-corpus-n.perl: drop empty, too short/long and unbalanced sentence pairs",
    [](CLI::App& cmd) -> CommandAction {
      auto args = std::make_shared<CleanCorpusArguments>();
      cmd.add_option("corpus", args->corpus, "Input prefix: reads CORPUS.L1 and CORPUS.L2")->required();
      cmd.add_option("l1", args->l1, "First language suffix (e.g. en)")->required();
      cmd.add_option("l2", args->l2, "Second language suffix (e.g. de)")->required();
      cmd.add_option("out", args->out, "Output prefix: writes OUT.L1 and OUT.L2")->required();
      add_integer_option(cmd, "min", args->options.min_words, "Fewest words a side may have")->required();
      add_integer_option(cmd, "max", args->options.max_words, "Most words a side may have")->required();
      cmd.add_option("--ratio", args->options.max_ratio, "Largest word-count ratio, either way")
          ->check(positive_number())
          ->capture_default_str();
      add_integer_option(cmd, "--max-word-length", args->options.max_word_length,
                         "Drop pairs with a word longer than this many characters")
          ->capture_default_str();
      return [args] { return run_clean_corpus(*args); };
    });

}  // namespace
}  // namespace attn::app
