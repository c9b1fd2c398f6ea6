#include "apps/cli/search_options.hpp"

#include "apps/cli/command.hpp"

namespace attn::app {

void add_search_options(CLI::App& cmd, nn::SearchOptions& search) {
  cmd.add_option("--beam", search.beam, "Beam size (1: greedy)")->check(positive_number())->capture_default_str();
  cmd.add_option("--lenpen", search.lenpen, "Length penalty exponent")->capture_default_str();
  cmd.add_option("--max-len-a", search.max_len_a, "max_len = a * src_len + b")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--max-len-b", search.max_len_b, "max_len = a * src_len + b")
      ->check(non_negative_number())
      ->capture_default_str();
}

}  // namespace attn::app
