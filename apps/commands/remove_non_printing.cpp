// `attnlab remove-non-printing-char`: Moses remove-non-printing-char.perl as a stdin -> stdout
// filter (docs/mt-tools.md §2.5; second step of fairseq's prepare-wmt14en2de.sh, §1.5 A).
#include "apps/cli/command.hpp"
#include "apps/cli/record_filter.hpp"
#include "data/remove_non_printing.hpp"

namespace attn::app {
namespace {

int run_remove_non_printing() {
  // The script decodes more loosely than UTF-8 allows (data/remove_non_printing.hpp).
  run_standard_filter(1, [](std::string_view record) { return data::remove_non_printing_record(record); },
                      RecordBytes::kAny);
  return 0;
}

CommandRegistration remove_non_printing_command(
    "remove-non-printing-char",
    "Moses remove-non-printing-char.perl: control/format/private/unassigned characters -> space, stdin -> stdout",
    [](CLI::App&) -> CommandAction { return run_remove_non_printing; });

}  // namespace
}  // namespace attn::app
