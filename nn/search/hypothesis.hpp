// A finished translation of one source sentence (docs/models.md §1.10), as fairseq's
// generator reports it: the tokens (ending in </s>), the length-normalised score
// S = Σ log p / L^lenpen, the per-token log-probabilities (fairseq's P- line) and, on
// request, the cross-attention of each output token over the source ([L, S], last decoder
// layer averaged over heads).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/tensor.hpp"
#include "nn/search/sampling.hpp"

namespace attn::nn {

struct KnnRetrieval;  // nn/search/knn_datastore.hpp

struct Hypothesis {
  std::vector<int64_t> tokens;
  double score = 0.0;
  std::vector<double> positional_scores;
  Tensor attention;  // float32 [tokens.size(), S] or undefined
};

struct SearchOptions {
  int64_t beam = 5;
  double lenpen = 1.0;
  double max_len_a = 0.0;   // max_len = min(a·src_len + b, max_positions − 1)
  int64_t max_len_b = 200;
  int64_t min_len = 1;      // </s> is forbidden before this many tokens
  int64_t nbest = 1;        // hypotheses returned per sentence (≤ beam)
  int64_t no_repeat_ngram_size = 0;  // n ≥ 2: no n-gram twice in a hypothesis (0: off)
  double unk_penalty = 0.0;  // subtracted from <unk>'s log-probability at every step (> 0: fewer <unk>)
  bool return_attention = false;
  double temperature = 1.0;  // each model's distribution sharpened (< 1) or flattened (> 1): softmax(logits / T)
  std::optional<SamplingOptions> sampling;  // draw the tokens instead of searching (nn/search/sampling.hpp)
  std::shared_ptr<const KnnRetrieval> knn;  // kNN-MT: each step's distribution interpolated (null: off)
};

}  // namespace attn::nn
