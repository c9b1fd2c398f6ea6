// `attnlab detokenize`: the Moses detokenizer as a stdin -> stdout filter, byte-exact with
// `detokenizer.perl -q -l LANG` (docs/mt-tools.md §2.4).
#include <memory>

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
  const data::MosesDetokenizer detokenizer(data::parse_moses_language(options.language));
  run_standard_filter(options.threads,
                      [&](std::string_view record) { return detokenizer.detokenize_record(record); });
  return 0;
}

CommandRegistration detokenize_command(
    "detokenize", "Moses detokenizer (detokenizer.perl), stdin -> stdout", [](CLI::App& cmd) -> CommandAction {
      auto options = std::make_shared<DetokenizeOptions>();
      cmd.add_option("-l,--language", options->language,
                     "Language (rules of detokenizer.perl)")
          ->check(CLI::IsMember(data::moses_language_codes()))
          ->capture_default_str();
      cmd.add_option("-j,--threads", options->threads, "Threads (output order is kept)")
          ->check(thread_count())
          ->capture_default_str();
      return [options] { return run_detokenize(*options); };
    });

}  // namespace
}  // namespace attn::app
