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
#include "nn/search/lexical_constraints.hpp"
#include "nn/search/sampling.hpp"

namespace attn::nn {

struct KnnRetrieval;  // nn/search/knn_datastore.hpp

struct Hypothesis {
  std::vector<int64_t> tokens;
  double score = 0.0;
  std::vector<double> positional_scores;
  Tensor attention;  // float32 [tokens.size(), S] or undefined
};

// The ranges of the search's real-valued options that keep its arithmetic finite, checked where
// the options are read (the flags, --eval-bleu-args); they lie far beyond any setting in use.
//   |lenpen| <= 20: a score (a float32 sum, below 2^128) is divided by L^lenpen in double, and
//     a length L of at most 2^24 (the most positions a model has) gives L^20 <= 2^480, within
//     double's 2^1024; -1e308 made the score infinite. Published settings lie in [0.6, 2].
//   |unk_penalty| <= 1000: <unk>'s float32 log-probability lowered by it and summed over 2^24
//     steps stays near 2^34; a few hundred already puts <unk> below every token float32 can
//     give a probability at all (its smallest is e^-103).
//   temperature in [1e-6, 1e6]: log-probabilities are divided by it in float32 (largest 3.4e38);
//     1e-40 made every score infinite. Settings in use lie in [0.1, 10].
//   max_len_a <= 2^24: a larger one allows every output the model's whole length anyway, and
//     1e308 times a source length is infinite.
constexpr double kMaxLengthPenalty = 20;
constexpr double kMaxUnknownPenalty = 1000;
constexpr double kMinTemperature = 1e-6, kMaxTemperature = 1e6;
constexpr double kMaxLengthRatio = 16777216;

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
  // Diverse beam search (Vijayakumar et al. 2016; fairseq's --diverse-beam-groups G, beam a
  // multiple of G): G groups of beam/G hypotheses, each group's next tokens penalised by
  // diverse_beam_strength times how often earlier groups chose them (nn/search/beam_search.hpp).
  int64_t diverse_beam_groups = 0;  // 0: off
  double diverse_beam_strength = 0.5;
  // fairseq's --match-source-len: a hypothesis ends exactly after as many tokens as its source
  // has (</s> included); max_len is the batch's padded source length.
  bool match_source_len = false;
  // Diverse siblings search (Li et al. 2016; fairseq's --diversity-rate r, on when r > −1): each
  // hypothesis's k-th best continuation is lowered by k·r before the hypotheses compete.
  double diversity_rate = -1.0;
  // Lexically constrained beam search (Post & Vilar 2018; fairseq's --constraints): every
  // hypothesis contains its sentence's constraints (nn/search/lexical_constraints.hpp), the beam
  // shared out across hypotheses that met more or fewer of them. Unset: off.
  std::optional<ConstraintOrder> constraint_order;
  std::shared_ptr<const KnnRetrieval> knn;  // kNN-MT: each step's distribution interpolated (null: off)

  // Whether one of fairseq's strategies chooses the tokens in place of plain beam search:
  // sampling, diverse beam search, match_source_len or diverse siblings (lexical constraints
  // need plain beam search, so they are not one of them).
  bool alternative_strategy() const {
    return sampling.has_value() || diverse_beam_groups > 0 || match_source_len || diversity_rate > -1;
  }
  // How many of them fairseq counts when it refuses two at once (build_generator): a diversity
  // rate in (−1, 0] is not counted, and then the strategy beside it wins.
  int exclusive_strategies() const {
    return int(sampling.has_value()) + int(diverse_beam_groups > 0) + int(match_source_len) + int(diversity_rate > 0);
  }
};

// The tokens a hypothesis may have before its </s>: max_len = min(a·src_len + b,
// max_positions − 1), src_len the padded source length, at least 0 (a search always makes one
// step: at worst the hypothesis is </s> alone); with match_source_len, min(src_len,
// max_positions − 1). Throws when a·src_len + b is NaN or infinite.
// Where max_len < min_len, max_len wins: the search cuts every hypothesis there.
int64_t max_output_length(const SearchOptions& options, int64_t src_len, int64_t max_positions);
// Whether min_len exceeds every sentence's max_len, whatever its source: with max_len_a 0 the
// longest output is max_len_b. Checked where the options are read, before a model is loaded
// (fairseq refuses min_len > max_len per batch; translate_sentences does too).
inline bool min_len_beyond_every_max_len(const SearchOptions& options) {
  return !options.match_source_len && options.max_len_a == 0 && options.min_len > options.max_len_b;
}

}  // namespace attn::nn
