// The beam search options shared by generate and translate (nn/search/hypothesis.hpp).
#pragma once
#include <CLI/CLI.hpp>

#include "nn/search/hypothesis.hpp"

namespace attn::app {

// --beam, --lenpen, --max-len-a, --max-len-b and --no-repeat-ngram-size; negative or
// non-finite lengths are refused (a maximum length below 1 would leave no hypothesis to
// print), and so is an n-gram size of 1.
void add_search_options(CLI::App& cmd, nn::SearchOptions& search);

}  // namespace attn::app
