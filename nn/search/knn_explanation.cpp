#include "nn/search/knn_explanation.hpp"

#include <cmath>

#include "autograd/autograd.hpp"
#include "core/ops.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::nn {

std::vector<KnnTokenExplanation> explain_knn(EncoderDecoderModel& model, const KnnRetrieval& retrieval,
                                             const std::vector<int64_t>& source, const std::vector<int64_t>& target) {
  check_retrieval(retrieval, "explain_knn");
  // The pair's own datastore holds exactly its teacher-forced decoder states, one per token.
  const KnnDatastore forced = KnnDatastore::build(model, {source}, {target});
  NoGradGuard no_grad;
  const Device device = model.parameters().front().device();
  const std::vector<double> log_probs =
      ops::log_softmax(model.decoder->output_layer(forced.keys().to(device)), 1).to_vector();
  const std::vector<std::vector<KnnNeighbor>> neighbours =
      retrieval.datastore->nearest(forced.keys(), retrieval.k, retrieval.probes);
  const int64_t vocab = int64_t(log_probs.size()) / forced.size();
  std::vector<KnnTokenExplanation> rows;
  for (int64_t t = 0; t < forced.size(); ++t) {
    KnnTokenExplanation row{.token = target[size_t(t)],
                            .model_probability = std::exp(log_probs[size_t(t * vocab + target[size_t(t)])]),
                            .neighbours = neighbours[size_t(t)]};
    for (const auto& [v, p] : knn_distribution(*retrieval.datastore, row.neighbours, retrieval.temperature))
      if (v == row.token) row.knn_probability = p;
    row.probability = retrieval.lambda * row.knn_probability + (1.0 - retrieval.lambda) * row.model_probability;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace attn::nn
