// The beam search options shared by generate and translate (nn/search/hypothesis.hpp).
#pragma once
#include "nn/search/hypothesis.hpp"

namespace CLI {
class App;  // <CLI/CLI.hpp>, included only where options are added
}

namespace attn::app {

// fairseq's sampling flags and --unnormalized, read into search options by apply_sampling_flags.
struct SamplingFlags {
  bool sampling = false;
  int64_t topk = -1;   // --sampling-topk (-1: off)
  double topp = -1.0;  // --sampling-topp (-1: off)
  uint64_t seed = 1;   // --seed: fairseq-generate's default
  bool unnormalized = false;  // --unnormalized: scores not divided by the length, whatever --lenpen says
};

// --beam, --lenpen, --max-len-a, --max-len-b, --no-repeat-ngram-size, --unkpen and
// --temperature into `search`, and --sampling, --sampling-topk, --sampling-topp and --seed into
// `sampling`; negative or non-finite lengths are refused (a maximum length below 1 would leave
// no hypothesis to print), and so is an n-gram size of 1, a --lenpen, --unkpen, --temperature
// or --max-len-a outside the range that keeps the search's numbers finite
// (nn/search/hypothesis.hpp), a --sampling-topk below 1 or a --sampling-topp outside (0, 1]
// (but -1, off, for both). Also fairseq's other strategies: --diverse-beam-groups (-1: off),
// --diverse-beam-strength, --match-source-len and --diversity-rate (-1: off), and
// --unnormalized.
void add_search_options(CLI::App& cmd, nn::SearchOptions& search, SamplingFlags& sampling);

// Sets search.sampling when --sampling was given, and search.lenpen to 0 with --unnormalized
// (fairseq's normalize_scores off: a hypothesis scores the sum of its log-probabilities); throws (attn::Error) for --sampling-topk or
// --sampling-topp without --sampling, or both at once, for two of --sampling,
// --diverse-beam-groups, --match-source-len and --diversity-rate (fairseq's search strategies,
// one at a time), and
// for a beam that is no multiple of the diverse groups.
void apply_sampling_flags(const SamplingFlags& flags, nn::SearchOptions& search);

}  // namespace attn::app
