// `attnlab tokenize`: the Moses tokenizer as a stdin -> stdout filter, byte-exact with
// `tokenizer.perl -q [-a] [-no-escape] -l LANG` (docs/mt-tools.md §2.1-§2.3). The code picks
// the rules (the default ones for codes without rules of their own) and the non-breaking prefix
// list (English, with a warning, for codes without one: so, ko, and any code the script knows
// nothing about, such as tr or ar, which it takes in the same way).
#include <iostream>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/cli/record_filter.hpp"
#include "data/moses_tokenizer.hpp"

namespace attn::app {
namespace {

struct TokenizeOptions {
  std::string language = "en";
  bool aggressive = false;
  bool no_escape = false;
  bool legacy2018 = false;
  int threads = 1;
};

int run_tokenize(const TokenizeOptions& options) {
  // tokenizer.perl warns the same way (even with -q) and falls back to English.
  if (!data::NonbreakingPrefixes::has_builtin(options.language))
    std::cerr << fmt::format("attnlab tokenize: no non-breaking prefix list for '{}', using the English one\n",
                             options.language);
  data::MosesTokenizerOptions tokenizer_options = data::moses_tokenizer_options(options.language);
  tokenizer_options.aggressive_hyphen_splitting = options.aggressive;
  tokenizer_options.escape = !options.no_escape;
  tokenizer_options.legacy2018 = options.legacy2018;
  const data::MosesTokenizer tokenizer(tokenizer_options);
  run_standard_filter(options.threads, [&](std::string_view record) { return tokenizer.tokenize_record(record); });
  return 0;
}

CommandRegistration tokenize_command(
    "tokenize", "Moses tokenizer (tokenizer.perl), stdin -> stdout", [](CLI::App& cmd) -> CommandAction {
      auto options = std::make_shared<TokenizeOptions>();
      cmd.add_option("-l,--language", options->language,
                     "Language: its rules and non-breaking prefixes, as in tokenizer.perl (a code without a "
                     "prefix list, such as ko or tr, gets the English one, with a warning)")
          ->check(not_empty("give a language code such as en or de"))
          ->capture_default_str();
      cmd.add_flag("-a,--aggressive", options->aggressive, "Aggressive hyphen splitting: a-b -> a @-@ b");
      cmd.add_flag("--no-escape", options->no_escape, "Do not escape & | < > ' \" [ ] as entities");
      cmd.add_flag("--legacy2018", options->legacy2018,
                   "Final-period rule of tokenizer.perl before 2018-11 (== sacremoses 0.1.1)");
      cmd.add_option("-j,--threads", options->threads, "Threads (output order is kept)")
          ->check(thread_count())
          ->capture_default_str();
      return [options] { return run_tokenize(*options); };
    });

}  // namespace
}  // namespace attn::app
