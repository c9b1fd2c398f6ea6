#include "apps/cli/search_options.hpp"

#include "apps/cli/command.hpp"

namespace attn::app {
namespace {

// 0 or an integer >= 2: a 1-gram block would forbid </s>, which opens every hypothesis.
CLI::Validator ngram_size() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int64_t value = 0;
        if (CLI::detail::lexical_cast(text, value) && (value == 0 || value >= 2)) return {};
        return "must be 0 (off) or an integer >= 2, got '" + text + "'";
      },
      "0|N>=2");
}

}  // namespace

void add_search_options(CLI::App& cmd, nn::SearchOptions& search) {
  cmd.add_option("--beam", search.beam, "Beam size (1: greedy)")->check(positive_number())->capture_default_str();
  cmd.add_option("--lenpen", search.lenpen, "Length penalty exponent")->capture_default_str();
  cmd.add_option("--max-len-a", search.max_len_a, "max_len = a * src_len + b")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--max-len-b", search.max_len_b, "max_len = a * src_len + b")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--no-repeat-ngram-size", search.no_repeat_ngram_size,
                 "Never repeat an n-gram of this size in a hypothesis (0: off; at least 2)")
      ->check(ngram_size())
      ->capture_default_str();
}

}  // namespace attn::app
