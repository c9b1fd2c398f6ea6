// See attention_alignment.hpp.
#include "apps/generation/attention_alignment.hpp"

#include <fmt/core.h>

#include "core/error.hpp"

namespace attn::app {
namespace {

// For each position, its index among the tokens that are neither pad nor </s> (−1 for those).
std::vector<int64_t> word_indices(const std::vector<int64_t>& tokens, int64_t pad, int64_t eos) {
  std::vector<int64_t> index(tokens.size(), -1);
  int64_t next = 0;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] != pad && tokens[i] != eos) index[i] = next++;
  return index;
}

// attention must be [target length, at least the source length].
void check_alignment_shape(const Tensor& attention, size_t source, size_t target) {
  ATTN_CHECK(attention.dim() == 2 && attention.size(0) == int64_t(target) && attention.size(1) >= int64_t(source),
             "alignment: attention {} does not fit a target of {} and a source of {} tokens", attention.shape().str(),
             target, source);
}

}  // namespace

std::vector<int64_t> attended_source_positions(const Tensor& attention, const std::vector<int64_t>& source,
                                               const std::vector<int64_t>& target, int64_t pad, int64_t eos) {
  check_alignment_shape(attention, source.size(), target.size());
  const std::vector<double> weights = attention.contiguous().to_vector();
  const size_t columns = size_t(attention.size(1)), first = columns - source.size();  // left padding skipped
  std::vector<int64_t> attended(target.size(), -1);
  for (size_t t = 0; t < target.size(); ++t) {
    if (target[t] == pad || target[t] == eos) continue;
    for (size_t s = 0; s < source.size(); ++s)
      if (source[s] != pad && source[s] != eos &&
          (attended[t] < 0 || weights[t * columns + first + s] > weights[t * columns + first + size_t(attended[t])]))
        attended[t] = int64_t(s);
  }
  return attended;
}

std::vector<AlignedPair> hard_alignment(const Tensor& attention, const std::vector<int64_t>& source,
                                        const std::vector<int64_t>& target, int64_t pad, int64_t eos) {
  const std::vector<int64_t> attended = attended_source_positions(attention, source, target, pad, eos);
  const std::vector<int64_t> source_index = word_indices(source, pad, eos);
  const std::vector<int64_t> target_index = word_indices(target, pad, eos);
  std::vector<AlignedPair> alignment;
  for (size_t t = 0; t < target.size(); ++t)
    if (attended[t] >= 0) alignment.push_back({source_index[size_t(attended[t])], target_index[t]});
  return alignment;
}

std::string format_alignment(const std::vector<AlignedPair>& alignment) {
  std::string line;
  for (const AlignedPair& pair : alignment)
    line += fmt::format("{}{}-{}", line.empty() ? "" : " ", pair.source, pair.target);
  return line;
}

std::string format_soft_alignment(const Tensor& attention, const std::vector<int64_t>& source,
                                  const std::vector<int64_t>& target) {
  check_alignment_shape(attention, source.size(), target.size());
  const std::vector<double> weights = attention.contiguous().to_vector();
  const size_t columns = size_t(attention.size(1)), first = columns - source.size();  // left padding skipped
  std::string line;
  for (size_t t = 0; t < target.size(); ++t) {
    if (t > 0) line += ' ';
    for (size_t s = first; s < columns; ++s)
      line += fmt::format("{}{:.6f}", s > first ? "," : "", weights[t * columns + s]);
  }
  return line;
}

}  // namespace attn::app
