// Statistics of attention over a corpus (`attnlab inspect --data DIR --subset test`), per place,
// layer and head, averaged over every real query row of every sentence (padding left out):
//
//   entropy   H = −Σ_j p_j ln p_j (nats) of the row's weights as a distribution: p = |w| / Σ|w|
//             (implied maps can carry negative weights: RFA's sin/cos features, the delta rule)
//   distance  Σ_j p_j |i − j|, how far from itself a query looks (self-attention only: a
//             target and a source position are not comparable)
//   to teacher  ½ Σ_j |w_j − w'_j| against another model's map of the same row (`--compare-to`):
//             the total variation distance when both rows are distributions: how far a swapped
//             or finetuned model's attention moved from its softmax teacher's
//
// Rows whose weights are all zero (a query whose features are all zero sees nothing) count
// only towards the distance to the teacher.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "nn/transformer/attention_maps.hpp"

namespace attn::app {

// Where the real tokens sit in a batch: sources left-padded to S, targets right-padded to T.
struct BatchGeometry {
  int64_t source_len = 0, target_len = 0;
  std::vector<int64_t> source_lengths, target_lengths;  // per sentence, </s> included
};

struct HeadStatistics {
  double entropy_sum = 0, distance_sum = 0, teacher_sum = 0;
  int64_t rows = 0, teacher_rows = 0;
  double entropy() const { return rows ? entropy_sum / double(rows) : 0.0; }
  double distance() const { return rows ? distance_sum / double(rows) : 0.0; }
  double to_teacher() const { return teacher_rows ? teacher_sum / double(teacher_rows) : 0.0; }
};

class AttentionStatistics {
 public:
  // Adds every real row of a batch's maps; `teacher` (optional) holds another model's maps of
  // the same batch and must have the same places, layers and heads (else attn::Error naming them).
  // A NaN or infinite weight in a real row is an error naming its place, layer and head
  // (check_weights_finite in attention_capture.hpp), not a head of entropy 0.
  void add(const nn::AttentionMaps& maps, const nn::AttentionMaps* teacher, const BatchGeometry& geometry);

  // [place][layer][head]
  const std::vector<std::vector<HeadStatistics>>& place(int p) const { return heads_[size_t(p)]; }
  bool compared() const { return compared_; }
  int64_t sentences() const { return sentences_; }

  // {"sentences", "places": {"encoder_self": [[{"entropy", "distance", "to_teacher"}, ...], ...], ...}}
  nlohmann::json to_json() const;
  // One line per place, layer and head, for the terminal.
  std::string table() const;

 private:
  std::vector<std::vector<HeadStatistics>> heads_[3];
  bool compared_ = false;
  int64_t sentences_ = 0;
};

}  // namespace attn::app
