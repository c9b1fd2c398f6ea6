// What kNN-MT's memory contributed to one translation (for reading, not on the search path):
// the pair forced through the model, and for each target token the model's probability, the
// neighbours' (eq. 2), the interpolation the search uses (eq. 3) and the neighbours themselves.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/search/knn_datastore.hpp"

namespace attn::nn {

struct KnnTokenExplanation {
  int64_t token = 0;
  double model_probability = 0;  // p_model(y_t | y_<t, x)
  double knn_probability = 0;    // p_kNN(y_t) of eq. 2
  double probability = 0;        // eq. 3: λ·p_kNN + (1 − λ)·p_model
  std::vector<KnnNeighbor> neighbours;  // the k nearest keys, nearest first
};

// One row per token of `target` (token ids ending in </s>), teacher-forced from `source` (ending
// in </s>), under `model` (put in eval mode) and `retrieval`.
std::vector<KnnTokenExplanation> explain_knn(EncoderDecoderModel& model, const KnnRetrieval& retrieval,
                                             const std::vector<int64_t>& source, const std::vector<int64_t>& target);

}  // namespace attn::nn
