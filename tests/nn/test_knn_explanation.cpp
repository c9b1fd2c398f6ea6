// explain_knn (nn/search/knn_explanation.hpp): on a pair the datastore holds, every token's
// nearest key is the pair's own state at that token; the model's probabilities are the
// teacher-forced forward's; eq. 3 mixes the two.
#include <catch.hpp>

#include <cmath>

#include "autograd/autograd.hpp"
#include "core/ops.hpp"
#include "nn/search/knn_explanation.hpp"
#include "test_support.hpp"
#include "tiny_transformer.hpp"

using namespace attn;
using namespace attn::testing;

TEST_CASE("explain_knn: a stored pair finds itself, token by token, beside the model's own probabilities") {
  manual_seed(5);
  nn::EncoderDecoderModel model(tiny_config(12));
  model.eval();
  const auto sources = random_sentences({5, 4, 6}, 12, 7), targets = random_sentences({6, 3, 5}, 12, 8);
  const auto store = std::make_shared<const nn::KnnDatastore>(nn::KnnDatastore::build(model, sources, targets));
  const double lambda = 0.3;
  const std::vector<nn::KnnTokenExplanation> rows =
      nn::explain_knn(model, nn::KnnRetrieval{store, 2, 1.0, lambda}, sources[1], targets[1]);
  REQUIRE(rows.size() == targets[1].size());

  // The teacher-forced forward's probabilities of the target tokens.
  std::vector<int64_t> previous{kEos};
  previous.insert(previous.end(), targets[1].begin(), targets[1].end() - 1);
  NoGradGuard no_grad;
  const Tensor logits = model.forward(from_vector(sources[1], {1, int64_t(sources[1].size())}),
                                      from_vector(previous, {1, int64_t(previous.size())}));
  const std::vector<double> log_probs = ops::log_softmax(logits, 2).to_vector();
  const int64_t vocab = logits.size(2);
  const int64_t first_key = int64_t(targets[0].size());  // pair 1's keys follow pair 0's
  for (size_t t = 0; t < rows.size(); ++t) {
    INFO("token " << t);
    const nn::KnnTokenExplanation& row = rows[t];
    CHECK(row.token == targets[1][t]);
    CHECK(row.model_probability == Approx(std::exp(log_probs[t * vocab + size_t(targets[1][t])])).epsilon(1e-5));
    REQUIRE(row.neighbours.size() == 2);
    CHECK(row.neighbours[0].key == first_key + int64_t(t));
    CHECK(row.neighbours[0].distance == Approx(0.0).margin(1e-4));
    // eq. 2 with k = 2, T = 1: the own key (distance 0) and the next nearest, by their tokens.
    const nn::KnnNeighbor& other = row.neighbours[1];
    const double w_other = std::exp(-double(other.distance));
    const double expected_knn =
        (1.0 + (store->value(other.key) == row.token ? w_other : 0.0)) / (1.0 + w_other);
    CHECK(row.knn_probability == Approx(expected_knn).epsilon(1e-5));
    CHECK(row.probability == Approx(lambda * row.knn_probability + (1 - lambda) * row.model_probability));
  }
  CHECK_THROWS_WITH(nn::explain_knn(model, nn::KnnRetrieval{store, 2, 0.0, lambda}, sources[1], targets[1]),
                    Catch::Contains("temperature"));
}
