// Several references per hypothesis, given as reference streams (one file per reference, each as
// long as the hypotheses), as sacreBLEU's metrics and multi-bleu.perl take them.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {

// At least one stream, each with one line per hypothesis; otherwise DataError naming `metric`.
inline void check_reference_streams(std::string_view metric, size_t num_hypotheses,
                                    const std::vector<std::vector<std::string>>& reference_streams) {
  if (reference_streams.empty()) throw DataError(fmt::format("{}: no reference stream given", metric));
  for (size_t r = 0; r < reference_streams.size(); ++r)
    if (reference_streams[r].size() != num_hypotheses)
      throw DataError(fmt::format("{}: reference stream {} has {} lines but there are {} hypotheses", metric, r + 1,
                                  reference_streams[r].size(), num_hypotheses));
}

// segment_stats(hypothesis, its references) of every hypothesis, in order, after
// check_reference_streams.
template <class SegmentStats>
auto each_segment_stats(std::string_view metric, const std::vector<std::string>& hypotheses,
                        const std::vector<std::vector<std::string>>& reference_streams, SegmentStats segment_stats) {
  check_reference_streams(metric, hypotheses.size(), reference_streams);
  using Stats = decltype(segment_stats(std::string(), std::vector<std::string>()));
  std::vector<Stats> segments;
  segments.reserve(hypotheses.size());
  std::vector<std::string> references(reference_streams.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    for (size_t r = 0; r < reference_streams.size(); ++r) references[r] = reference_streams[r][i];
    segments.push_back(segment_stats(hypotheses[i], references));
  }
  return segments;
}

}  // namespace attn::data
