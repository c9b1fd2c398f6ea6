// `attnlab normalize-punctuation -l LANG`: Moses normalize-punctuation.perl as a stdin -> stdout
// filter (docs/mt-tools.md §2.5; first step of fairseq's prepare-wmt14en2de.sh, §1.5 A).
#include <memory>

#include "apps/cli/command.hpp"
#include "apps/cli/record_filter.hpp"
#include "data/normalize_punctuation.hpp"

namespace attn::app {
namespace {

int run_normalize_punctuation(const data::NormalizePunctuationOptions& options) {
  const data::PunctuationNormalizer normalizer(options);
  // The script works on bytes: invalid UTF-8 passes through as it comes.
  run_standard_filter(1, [&](std::string_view record) { return normalizer.normalize_record(record); },
                      RecordBytes::kAny);
  return 0;
}

CommandRegistration normalize_punctuation_command(
    "normalize-punctuation", "Moses normalize-punctuation.perl, stdin -> stdout",
    [](CLI::App& cmd) -> CommandAction {
      auto options = std::make_shared<data::NormalizePunctuationOptions>();
      cmd.add_option("-l,--language", options->language,
                     "Language: en; cs/cz; others (de ...) move quotes before , and .; de/es/fr/cs/cz "
                     "write 1,000 for 1<NBSP>000, others 1.000")
          ->capture_default_str();
      cmd.add_flag("--penn", options->penn, "Keep ` and '' (Penn Treebank quotes)");
      return [options] { return run_normalize_punctuation(*options); };
    });

}  // namespace
}  // namespace attn::app
