// Batched decoding in input order. See translator.hpp.
#include "apps/translator.hpp"

#include <algorithm>
#include <numeric>

#include "autograd/autograd.hpp"
#include "nn/search/beam_search.hpp"
#include "nn/search/greedy_search.hpp"

namespace attn::app {
namespace {

constexpr int64_t kDefaultSentences = 128;

// Left-padded int64 [rows, longest] of the chosen sentences.
Tensor left_padded_sources(const std::vector<std::vector<int64_t>>& sources, const std::vector<size_t>& rows,
                           int64_t pad) {
  size_t longest = 0;
  for (size_t i : rows) longest = std::max(longest, sources[i].size());
  std::vector<int64_t> values(rows.size() * longest, pad);
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<int64_t>& s = sources[rows[r]];
    std::copy(s.begin(), s.end(), values.begin() + int64_t((r + 1) * longest - s.size()));
  }
  return from_vector<int64_t>(values, {int64_t(rows.size()), int64_t(longest)});
}

}  // namespace

std::vector<std::vector<size_t>> decoding_batches(const std::vector<std::vector<int64_t>>& sources,
                                                  const DecodingOptions& options) {
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sources[a].size() > sources[b].size(); });
  const int64_t max_sentences =
      options.max_sentences > 0 ? options.max_sentences : (options.max_tokens > 0 ? INT64_MAX : kDefaultSentences);
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  int64_t longest = 0;
  for (size_t i : order) {
    const int64_t length = std::max<int64_t>(int64_t(sources[i].size()), 1);
    const int64_t new_longest = std::max(longest, length);
    const bool over_tokens = options.max_tokens > 0 && new_longest * int64_t(current.size() + 1) > options.max_tokens;
    if (!current.empty() && (over_tokens || int64_t(current.size()) >= max_sentences)) {
      batches.push_back(std::move(current));
      current.clear();
    }
    longest = current.empty() ? length : std::max(longest, length);
    current.push_back(i);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

std::vector<std::vector<nn::Hypothesis>> translate_sentences(nn::EncoderDecoderModel& model,
                                                             const std::vector<std::vector<int64_t>>& sources,
                                                             const DecodingOptions& options,
                                                             const std::function<void(size_t)>& on_batch) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<std::vector<nn::Hypothesis>> results(sources.size());
  size_t done = 0;
  for (const std::vector<size_t>& rows : decoding_batches(sources, options)) {
    const Tensor src = left_padded_sources(sources, rows, model.config().padding_idx);
    if (options.search.beam == 1) {
      std::vector<nn::Hypothesis> best = nn::greedy_search(model, src, options.search);
      for (size_t r = 0; r < rows.size(); ++r) results[rows[r]] = {std::move(best[r])};
    } else {
      std::vector<std::vector<nn::Hypothesis>> hypotheses = nn::beam_search(model, src, options.search);
      for (size_t r = 0; r < rows.size(); ++r) results[rows[r]] = std::move(hypotheses[r]);
    }
    done += rows.size();
    if (on_batch) on_batch(done);
  }
  return results;
}

}  // namespace attn::app
