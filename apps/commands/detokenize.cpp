// `attnlab detokenize`: the Moses detokenizer as a stdin -> stdout filter, byte-exact with
// `detokenizer.perl -q -l LANG` (docs/mt-tools.md §2.4).
#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/cli/record_filter.hpp"
#include "data/moses_detokenizer.hpp"

namespace attn::app {
namespace {

struct DetokenizeOptions {
  std::string language = "en";
  int threads = 1;
};

int run_detokenize(const DetokenizeOptions& options) {
  // detokenizer.perl warns the same way and goes on with the rules every language shares.
  if (data::parse_moses_language(options.language) == data::MosesLanguage::Other)
    std::cerr << fmt::format("attnlab detokenize: no rules of its own for '{}', using the common ones\n",
                             options.language);
  const data::MosesDetokenizer detokenizer(data::parse_moses_language(options.language));
  run_standard_filter(options.threads,
                      [&](std::string_view record) { return detokenizer.detokenize_record(record); });
  return 0;
}

CommandRegistration detokenize_command(
    "detokenize", "Moses detokenizer (detokenizer.perl), stdin -> stdout", [](CLI::App& cmd) -> CommandAction {
      auto options = std::make_shared<DetokenizeOptions>();
      cmd.add_option("-l,--language", options->language,
                     "Language: its rules, as in detokenizer.perl (a code without rules of its own gets the "
                     "common ones, with a warning)")
          ->check(not_empty("give a language code such as en or de"))
          ->capture_default_str();
      cmd.add_option("-j,--threads", options->threads, "Threads (output order is kept)")
          ->check(thread_count())
          ->capture_default_str();
      return [options] { return run_detokenize(*options); };
    });

}  // namespace
}  // namespace attn::app
