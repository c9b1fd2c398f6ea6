// `attnlab input-from-sgm < file.sgm`: Moses input-from-sgm.perl, the segments of a WMT SGML
// test set one per line (docs/mt-tools.md §2.5; GNMT recipe, §1.5 B).
#include <iostream>

#include "apps/cli/command.hpp"
#include "data/input_from_sgm.hpp"
#include "data/standard_streams.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

int run_input_from_sgm() {
  for (const auto& segment : data::read_sgm_segments(data::standard_input(), "<stdin>")) std::cout << segment << '\n';
  return 0;
}

CommandRegistration input_from_sgm_command("input-from-sgm",
                                           "Moses input-from-sgm.perl: <seg> texts of an SGML file, stdin -> stdout",
                                           [](CLI::App&) -> CommandAction { return run_input_from_sgm; });

}  // namespace
}  // namespace attn::app
