// Sampling instead of searching (fairseq's --sampling, its search.Sampling; docs/models.md
// §1.10.4): at every step each hypothesis draws its next token from the model's distribution,
// optionally restricted to the k most probable tokens (--sampling-topk) or to the smallest set
// of most probable tokens whose probability reaches p (--sampling-topp, nucleus sampling,
// Holtzman et al. 2020). The hypothesis's score adds the token's log-probability under the
// unrestricted distribution, as fairseq's does. The rest of the search is unchanged: the
// `beam` sampled candidates take the place of the 2·beam best ones.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn::nn {

struct SamplingOptions {
  int64_t topk = 0;   // > 0: draw among the k most probable tokens only
  double topp = 0.0;  // in (0, 1]: draw among the most probable tokens whose mass reaches p (0: off)
  // The random numbers: each step takes one counter per hypothesis (row), so the same seed and
  // the same batches give the same samples. Shared by the copies of the options.
  std::shared_ptr<Generator> generator = std::make_shared<Generator>(1);
};

struct Draw {
  int64_t token = 0;
  float log_prob = 0.0f;  // the row's entry for the token, as given
};

// One token per row of log_probs [N, V] (float32), drawn from exp(log_probs) (−∞: never)
// restricted as `options` say, with its log-probability. A row with no finite entry gives its
// first token.
std::vector<Draw> sample_tokens(const Tensor& log_probs, const SamplingOptions& options);

}  // namespace attn::nn
