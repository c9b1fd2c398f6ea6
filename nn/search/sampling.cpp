#include "nn/search/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace attn::nn {
namespace {

// The tokens a row may draw, with their probabilities: all finite ones in token order, or the
// k most probable, or the nucleus (those whose running mass, most probable first, stays below
// p, and the one that reaches it), most probable first, ties in token order.
std::vector<int64_t> allowed_tokens(const std::vector<double>& probs, const SamplingOptions& options) {
  std::vector<int64_t> tokens;
  for (int64_t v = 0; v < int64_t(probs.size()); ++v)
    if (probs[size_t(v)] > 0.0) tokens.push_back(v);
  if (options.topk <= 0 && options.topp <= 0.0) return tokens;
  const auto more_probable = [&](int64_t a, int64_t b) { return probs[size_t(a)] > probs[size_t(b)]; };
  std::stable_sort(tokens.begin(), tokens.end(), more_probable);
  if (options.topk > 0) {
    tokens.resize(std::min(tokens.size(), size_t(options.topk)));
    return tokens;
  }
  double mass = 0.0;
  size_t kept = 0;
  while (kept < tokens.size() && mass < options.topp) mass += probs[size_t(tokens[kept++])];
  tokens.resize(kept);
  return tokens;
}

int64_t draw(const std::vector<double>& probs, const std::vector<int64_t>& tokens, double uniform) {
  double total = 0.0;
  for (int64_t v : tokens) total += probs[size_t(v)];
  const double target = uniform * total;
  double running = 0.0;
  for (int64_t v : tokens) {
    running += probs[size_t(v)];
    if (target < running) return v;
  }
  return tokens.back();  // uniform·total rounded up to the total
}

}  // namespace

std::vector<Draw> sample_tokens(const Tensor& log_probs, const SamplingOptions& options) {
  ATTN_CHECK(log_probs.dim() == 2, "sampling: log-probabilities must be [N, V], got {}", log_probs.shape().str());
  ATTN_CHECK(options.topk >= 0 && options.topp >= 0.0 && options.topp <= 1.0,
             "sampling: topk must be >= 0 and topp in [0, 1], got {} and {}", options.topk, options.topp);
  const int64_t rows = log_probs.size(0), vocab = log_probs.size(1);
  const std::vector<double> values = log_probs.to_vector();
  const GeneratorState stream = options.generator->state();
  const uint64_t first = options.generator->reserve(uint64_t(rows));
  std::vector<Draw> draws(static_cast<size_t>(rows));
  std::vector<double> probs(static_cast<size_t>(vocab));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t v = 0; v < vocab; ++v) probs[size_t(v)] = std::exp(values[size_t(r * vocab + v)]);  // exp(−∞) = 0
    const std::vector<int64_t> allowed = allowed_tokens(probs, options);
    const double uniform = philox_uniform_double(stream.seed, first, uint64_t(r));
    const int64_t token = allowed.empty() ? 0 : draw(probs, allowed, uniform);
    draws[size_t(r)] = {token, float(values[size_t(r * vocab + token)])};
  }
  return draws;
}

}  // namespace attn::nn
