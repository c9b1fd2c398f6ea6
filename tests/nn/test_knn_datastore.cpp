// kNN-MT (nn/search/knn_datastore.hpp): the exact nearest-key search against a double-precision
// exhaustive one across key chunks; eqs. 2–3 against a hand computation; the datastore's keys
// are the states incremental decoding queries with; greedy search on the neighbours alone
// (λ = 1, k = 1) reproduces the pair the datastore holds; ties across chunks; the file round
// trip; option errors; keys reduced by PCA against a double-precision search of the projections;
// keys in k-means lists: all lists = exact, fewer = the exhaustive search of the probed lists;
// the keys' variance against a double-precision one, and the relative temperature that makes
// eq. 2 the same for keys and queries scaled together.
#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "core/ops.hpp"
#include "core/safetensors.hpp"
#include "nn/search/greedy_search.hpp"
#include "nn/search/inverted_lists.hpp"
#include "nn/search/knn_datastore.hpp"
#include "nn/search/principal_axes.hpp"
#include "test_support.hpp"
#include "tiny_transformer.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

// Random normal keys and queries (keys first, from one generator), each key's value its index.
struct RandomKeys {
  Tensor keys, queries;
  std::vector<int64_t> values;
};

RandomKeys random_keys(int64_t count, int64_t dim, int64_t queries, uint64_t seed) {
  Generator gen(seed);
  RandomKeys out;
  out.keys = normal({count, dim}, 0, 1, DType::Float32, &gen);
  out.queries = normal({queries, dim}, 0, 1, DType::Float32, &gen);
  out.values.resize(size_t(count));
  std::iota(out.values.begin(), out.values.end(), 0);
  return out;
}

struct Reference {
  std::vector<double> distance;  // to every key
  std::vector<int64_t> order;    // keys nearest first (ties by index)
};

Reference exhaustive(const std::vector<double>& keys, const std::vector<double>& query, int64_t dim) {
  const int64_t n = int64_t(keys.size()) / dim;
  Reference ref{std::vector<double>(size_t(n)), std::vector<int64_t>(size_t(n))};
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0.0;
    for (int64_t d = 0; d < dim; ++d) sum += (query[d] - keys[j * dim + d]) * (query[d] - keys[j * dim + d]);
    ref.distance[j] = sum;
  }
  std::iota(ref.order.begin(), ref.order.end(), 0);
  std::stable_sort(ref.order.begin(), ref.order.end(), [&](int64_t a, int64_t b) { return ref.distance[a] < ref.distance[b]; });
  return ref;
}

}  // namespace

TEST_CASE("the nearest keys are those of an exhaustive double-precision search, across key chunks") {
  constexpr int64_t kKeys = 20000, kDim = 8, kQueries = 6, kK = 10;  // 20,000 keys: three chunks of 8,192
  const auto [keys, queries, values] = random_keys(kKeys, kDim, kQueries, 7);
  const nn::KnnDatastore store(keys, values);
  const auto found = store.nearest(queries, kK);
  const std::vector<double> key_values = keys.to_vector(), query_values = queries.to_vector();
  REQUIRE(found.size() == size_t(kQueries));
  for (int64_t r = 0; r < kQueries; ++r) {
    const std::vector<double> query(query_values.begin() + r * kDim, query_values.begin() + (r + 1) * kDim);
    const Reference ref = exhaustive(key_values, query, kDim);
    REQUIRE(found[r].size() == size_t(kK));
    for (int64_t j = 0; j < kK; ++j) {
      const nn::KnnNeighbor& n = found[r][j];
      CHECK(n.distance == Approx(ref.distance[n.key]).margin(1e-4));
      CHECK(n.key == ref.order[j]);  // random keys: no two distances within float rounding
    }
  }
  CHECK(store.nearest(queries, kKeys + 5).front().size() == size_t(kKeys));  // k beyond the store: all keys
}

TEST_CASE("a datastore saved to a file reads back with its keys, values and metadata") {
  Generator gen(3);
  const Tensor keys = normal({7, 5}, 0, 1, DType::Float32, &gen);
  const nn::KnnDatastore store(keys, {4, 1, 4, 0, 2, 3, 9});
  test::TempDir dir;
  const std::string path = dir.file("store.safetensors");
  store.save(path, {{"model", "abc"}});
  std::map<std::string, std::string> metadata;
  const nn::KnnDatastore read = nn::KnnDatastore::load(path, &metadata);
  CHECK(metadata == std::map<std::string, std::string>{{"model", "abc"}});
  REQUIRE(read.size() == 7);
  CHECK(read.keys().to_vector() == keys.to_vector());
  for (int64_t i = 0; i < 7; ++i) CHECK(read.value(i) == store.value(i));
  save_safetensors(path, {{"keys", keys}});  // no values: an error naming the file and the tensor
  CHECK_THROWS_WITH(nn::KnnDatastore::load(path), Catch::Contains(path) && Catch::Contains("values"));
  save_safetensors(path, {{"keys", keys}, {"values", from_vector(std::vector<int64_t>{1, 2}, {2})}});
  CHECK_THROWS_WITH(nn::KnnDatastore::load(path), Catch::Contains("not a kNN-MT datastore"));
  CHECK(read.largest_value() == 9);
}

TEST_CASE("a datastore file with a NaN number or a negative value is refused naming it") {
  test::TempDir dir;
  const std::string path = dir.file("store.safetensors");
  const Tensor values = from_vector(std::vector<int64_t>{4, 1}, {2});
  save_safetensors(path, {{"keys", from_vector(std::vector<float>{0, 1, std::nanf(""), 3}, {2, 2})}, {"values", values}});
  CHECK_THROWS_WITH(nn::KnnDatastore::load(path),
                    Catch::Contains(path) && Catch::Contains("keys holds a NaN or infinite number (at flat index 2)"));
  const Tensor keys = from_vector(std::vector<float>{0, 1, 2, 3}, {2, 2});
  save_safetensors(path, {{"keys", keys}, {"values", from_vector(std::vector<int64_t>{4, -7}, {2})}});
  CHECK_THROWS_WITH(nn::KnnDatastore::load(path), Catch::Contains("value 1 is -7, not a token id"));
  save_safetensors(path, {{"keys", keys}, {"values", values}});
  CHECK(nn::KnnDatastore::load(path).largest_value() == 4);
}

TEST_CASE("equal distances keep the lower key index, within a chunk and across chunks") {
  // 20,000 keys far from the query except copies of one key at indices spread over the three
  // chunks; with k smaller than the number of copies the lowest-index copies win.
  constexpr int64_t kKeys = 20000, kDim = 4;
  const std::vector<int64_t> copies = {19990, 3, 8191, 8192, 16384, 100, 12000};
  std::vector<float> key_values(size_t(kKeys * kDim), 50.0f);
  for (int64_t c : copies) std::fill_n(key_values.begin() + c * kDim, kDim, 1.0f);
  std::vector<int64_t> values(kKeys, 0);
  const nn::KnnDatastore store(from_vector(key_values, {kKeys, kDim}), values);
  const auto found = store.nearest(from_vector(std::vector<float>(kDim, 0.5f), {1, kDim}), 5);
  std::vector<int64_t> keys;
  for (const nn::KnnNeighbor& n : found.front()) keys.push_back(n.key);
  CHECK(keys == std::vector<int64_t>{3, 100, 8191, 8192, 12000});
  for (const nn::KnnNeighbor& n : found.front()) CHECK(n.distance == Approx(1.0).margin(1e-5));
}

TEST_CASE("the neighbours' distribution (eq. 2) and the interpolation (eq. 3)") {
  // Keys on a line at 0, 1, 2, 3 with values 5, 6, 5, 7; the query at 0.5: squared distances
  // 0.25, 0.25, 2.25, 6.25; k = 3 keeps keys 0, 1, 2.
  const nn::KnnDatastore store(from_vector(std::vector<float>{0, 0, 1, 0, 2, 0, 3, 0}, {4, 2}), {5, 6, 5, 7});
  const Tensor query = from_vector(std::vector<float>{0.5f, 0.0f}, {1, 2});
  const int64_t vocab = 9;
  std::vector<float> model(vocab);
  for (int64_t v = 0; v < vocab; ++v) model[v] = float(std::log((v + 1.0) / 45.0));  // Σ (v+1)/45 = 1
  const Tensor log_probs = from_vector(model, {1, vocab});
  auto retrieval = [&](double lambda) {
    return nn::KnnRetrieval{std::make_shared<const nn::KnnDatastore>(store), 3, 2.0, lambda};
  };
  const double w_near = std::exp(-0.25 / 2.0), w_far = std::exp(-2.25 / 2.0), total = 2 * w_near + w_far;
  std::vector<double> knn(vocab, 0.0);
  knn[5] = (w_near + w_far) / total;
  knn[6] = w_near / total;
  const std::vector<std::pair<int64_t, double>> votes =
      nn::knn_distribution(store, store.nearest(query, 3).front(), 2.0);  // tokens in first-seen order
  REQUIRE(votes.size() == 2);
  CHECK(votes[0].first == 5);
  CHECK(votes[0].second == Approx(knn[5]));
  CHECK(votes[1].first == 6);
  CHECK(votes[1].second == Approx(knn[6]));
  const double lambda = 0.3;
  const std::vector<double> mixed = nn::interpolate_knn(retrieval(lambda), query, log_probs).to_vector();
  for (int64_t v = 0; v < vocab; ++v)
    CHECK(std::exp(mixed[v]) == Approx(lambda * knn[v] + (1 - lambda) * (v + 1.0) / 45.0).epsilon(1e-6));
  CHECK(nn::interpolate_knn(retrieval(0.0), query, log_probs).to_vector() == log_probs.to_vector());  // λ = 0: the model's
  const std::vector<double> only_knn = nn::interpolate_knn(retrieval(1.0), query, log_probs).to_vector();
  CHECK(std::exp(only_knn[5]) == Approx(knn[5]));
  CHECK(std::isinf(only_knn[7]));  // key 3 is not among the 3 nearest: probability 0
}

TEST_CASE("the datastore's keys are the states incremental decoding queries with") {
  manual_seed(3);
  nn::EncoderDecoderModel model(tiny_config(12));
  const auto sources = random_sentences({4, 6, 3}, 12, 1), targets = random_sentences({5, 2, 7}, 12, 2);
  // Two batches, padded.
  const nn::KnnDatastore store = nn::KnnDatastore::build(model, sources, targets, {.batch_sentences = 2});
  std::vector<int64_t> all_targets;
  for (const auto& t : targets) all_targets.insert(all_targets.end(), t.begin(), t.end());
  REQUIRE(store.size() == int64_t(all_targets.size()));
  for (int64_t i = 0; i < store.size(); ++i) CHECK(store.value(i) == all_targets[i]);

  NoGradGuard no_grad;
  const std::vector<double> keys = store.keys().to_vector();
  int64_t key = 0;
  for (size_t s = 0; s < sources.size(); ++s) {
    nn::DecoderState state =
        model.init_decoder_state(model.encode(from_vector(sources[s], {1, int64_t(sources[s].size())})));
    int64_t previous = kEos;
    for (int64_t token : targets[s]) {
      Tensor features;
      model.decode_step(from_vector(std::vector<int64_t>{previous}, {1}), state, nullptr, &features);
      const std::vector<double> f = features.to_vector();
      REQUIRE(int64_t(f.size()) == store.dim());
      for (int64_t d = 0; d < store.dim(); ++d) CHECK(keys[key * store.dim() + d] == Approx(f[d]).margin(1e-5));
      previous = token;
      ++key;
    }
  }
}

TEST_CASE("on its neighbours alone (lambda 1, k 1) greedy search reproduces the pair the datastore holds") {
  manual_seed(4);
  nn::EncoderDecoderModel model(tiny_config(12));
  const auto sources = random_sentences({5}, 12, 3), targets = random_sentences({6}, 12, 4);
  nn::SearchOptions options;
  options.beam = 1;
  options.max_len_b = 20;
  options.knn = std::make_shared<const nn::KnnRetrieval>(nn::KnnRetrieval{
      std::make_shared<const nn::KnnDatastore>(nn::KnnDatastore::build(model, sources, targets)), 1, 1.0, 1.0});
  const auto hypotheses = nn::greedy_search(model, from_vector(sources[0], {1, int64_t(sources[0].size())}), options);
  CHECK(hypotheses.at(0).tokens == targets[0]);
}

TEST_CASE("kNN-MT refuses a temperature <= 0, a lambda outside [0, 1] and mismatched shapes") {
  auto store = std::make_shared<const nn::KnnDatastore>(from_vector(std::vector<float>{0, 1}, {1, 2}), std::vector<int64_t>{4});
  const Tensor query = from_vector(std::vector<float>{0, 0}, {1, 2}), log_probs = full({1, 6}, std::log(1.0 / 6));
  CHECK_THROWS_WITH(nn::interpolate_knn({store, 1, 0.0, 0.5}, query, log_probs), Catch::Contains("temperature > 0"));
  CHECK_THROWS_WITH(nn::interpolate_knn({store, 1, 1.0, 1.5}, query, log_probs), Catch::Contains("lambda <= 1"));
  CHECK_THROWS_WITH(nn::interpolate_knn({store, 1, 1.0, 0.5}, full({1, 3}, 0.0), log_probs), Catch::Contains("[B, 2]"));
  CHECK_THROWS_WITH(nn::KnnDatastore(full({2, 2}, 0.0), {4}), Catch::Contains("do not match 1 values"));
}

TEST_CASE("reduced keys: the search is an exhaustive double-precision one over the projections") {
  manual_seed(5);
  nn::EncoderDecoderModel model(tiny_config(12));
  const auto sources = random_sentences({4, 6, 3, 5}, 12, 5), targets = random_sentences({5, 2, 7, 6}, 12, 6);
  const nn::KnnDatastore full = nn::KnnDatastore::build(model, sources, targets);
  const nn::KnnDatastore reduced = nn::KnnDatastore::build(model, sources, targets, {.reduced_dims = 3});
  REQUIRE(reduced.dim() == full.dim());
  REQUIRE(reduced.key_dim() == 3);
  const int64_t dim = full.dim();
  // The keys are the states times the projection, the projection the states' principal axes.
  const std::vector<double> states = full.keys().to_vector(), axes = reduced.projection().to_vector();
  const nn::PrincipalAxes principal = nn::principal_axes(full.keys(), 3);
  CHECK(axes == principal.axes.to_vector());
  CHECK(full.kept_variance() == 1.0);
  REQUIRE(reduced.kept_variance());
  CHECK(*reduced.kept_variance() == principal.kept_variance);
  CHECK(principal.kept_variance < 1.0);
  auto project = [&](const double* x) {
    std::vector<double> p(3, 0.0);
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t d = 0; d < dim; ++d) p[size_t(j)] += x[d] * axes[size_t(d * 3 + j)];
    return p;
  };
  std::vector<double> projected_keys;
  for (int64_t i = 0; i < full.size(); ++i) {
    const std::vector<double> p = project(states.data() + i * dim);
    projected_keys.insert(projected_keys.end(), p.begin(), p.end());
  }
  const std::vector<double> stored = reduced.keys().to_vector();
  REQUIRE(stored.size() == projected_keys.size());
  for (size_t i = 0; i < stored.size(); ++i) CHECK(stored[i] == Approx(projected_keys[i]).margin(1e-5));
  // Queries are full states, projected by the store before the search.
  Generator gen(11);
  const Tensor queries = normal({4, dim}, 0, 1, DType::Float32, &gen);
  const std::vector<double> query_values = queries.to_vector();
  const auto found = reduced.nearest(queries, 5);
  for (int64_t r = 0; r < 4; ++r) {
    const Reference ref = exhaustive(projected_keys, project(query_values.data() + r * dim), 3);
    for (int64_t j = 0; j < 5; ++j) {
      CHECK(found[r][j].key == ref.order[j]);
      CHECK(found[r][j].distance == Approx(ref.distance[found[r][j].key]).margin(1e-4));
    }
  }
  // All axes are a rotation: every distance, and so every neighbour, as without the projection.
  const nn::KnnDatastore rotated = nn::KnnDatastore::build(model, sources, targets, {.reduced_dims = dim});
  const auto exact = full.nearest(queries, 5), turned = rotated.nearest(queries, 5);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t j = 0; j < 5; ++j) {
      CHECK(turned[r][j].key == exact[r][j].key);
      CHECK(turned[r][j].distance == Approx(exact[r][j].distance).margin(1e-4));
    }
  // The file keeps the projection and the share of the variance it keeps (when known).
  test::TempDir dir;
  const std::string path = dir.file("reduced.safetensors");
  reduced.save(path, {});
  const nn::KnnDatastore read = nn::KnnDatastore::load(path);
  CHECK(read.projection().to_vector() == axes);
  CHECK(read.kept_variance() == reduced.kept_variance());
  CHECK(read.nearest(queries, 5)[2][0].key == found[2][0].key);
  const std::vector<int64_t> values(size_t(reduced.size()), 0);
  nn::KnnDatastore(reduced.keys(), values, reduced.projection()).save(path, {});
  CHECK_FALSE(nn::KnnDatastore::load(path).kept_variance());
  save_safetensors(path, {{"keys", reduced.keys()}, {"values", from_vector(values, {reduced.size()})},
                          {"projection", reduced.projection()}, {"kept_variance", attn::full({1}, 1.5, DType::Float64)}});
  CHECK_THROWS_WITH(nn::KnnDatastore::load(path), Catch::Contains(path) && Catch::Contains("kept_variance must be"));
  CHECK_THROWS_WITH(nn::KnnDatastore::build(model, sources, targets, {.reduced_dims = dim + 1}),
                    Catch::Contains(fmt::format("cannot reduce the model's {}-number states to {} dims", dim, dim + 1)));
}

TEST_CASE("keys in k-means lists: probing every list is the exact search, fewer probe only their lists' keys") {
  // 20,000 random keys (three chunks of 8,192 for the exact path), 16 lists.
  constexpr int64_t kKeys = 20000, kDim = 6, kQueries = 5, kK = 7, kLists = 16, kProbes = 3;
  const auto [keys, queries, values] = random_keys(kKeys, kDim, kQueries, 13);
  const nn::KnnDatastore exact(keys, values);
  nn::KnnDatastore split(keys, values);
  split.split_into_lists(kLists);
  REQUIRE(split.lists() == kLists);
  CHECK_THROWS_WITH(split.split_into_lists(4), Catch::Contains("split into lists already"));
  // Rows grouped by list, each row still the key its id names, with its value.
  const std::vector<double> key_values = keys.to_vector(), grouped = split.keys().to_vector();
  for (int64_t row : {int64_t(0), int64_t(777), kKeys - 1})
    for (int64_t d = 0; d < kDim; ++d)
      CHECK(grouped[size_t(row * kDim + d)] == key_values[size_t(split.key_id(row) * kDim + d)]);

  const auto all = exact.nearest(queries, kK);
  for (int64_t probes : {int64_t(0), kLists, kLists + 3}) {
    const auto every_list = split.nearest(queries, kK, probes);
    for (int64_t r = 0; r < kQueries; ++r)
      for (int64_t j = 0; j < kK; ++j) {
        CHECK(every_list[r][j].key == all[r][j].key);
        CHECK(every_list[r][j].distance == Approx(all[r][j].distance).margin(1e-4));
      }
  }

  // kProbes lists: the exhaustive double-precision search over the keys of the query's kProbes
  // nearest lists (the lists and centroids are what build_inverted_lists makes of the same keys).
  const nn::InvertedLists lists = nn::build_inverted_lists(keys, kLists);
  const auto probed = nn::nearest_lists(lists.centroids, queries, kProbes);
  const auto found = split.nearest(queries, kK, kProbes);
  const std::vector<double> query_values = queries.to_vector();
  for (int64_t r = 0; r < kQueries; ++r) {
    const std::vector<double> query(query_values.begin() + r * kDim, query_values.begin() + (r + 1) * kDim);
    const Reference ref = exhaustive(key_values, query, kDim);
    std::set<int64_t> reachable;
    for (int64_t list : probed[r])
      for (int64_t at = lists.offsets[size_t(list)]; at < lists.offsets[size_t(list) + 1]; ++at)
        reachable.insert(lists.order[size_t(at)]);
    std::vector<int64_t> expected;
    for (int64_t key : ref.order)
      if (reachable.count(key) && int64_t(expected.size()) < kK) expected.push_back(key);
    REQUIRE(found[r].size() == size_t(kK));
    for (int64_t j = 0; j < kK; ++j) {
      CHECK(found[r][j].key == expected[size_t(j)]);
      CHECK(found[r][j].distance == Approx(ref.distance[size_t(expected[size_t(j)])]).margin(1e-4));
    }
  }

  // The file keeps the keys in their given order and the lists beside them.
  test::TempDir dir;
  const std::string path = dir.file("lists.safetensors");
  split.save(path, {});
  CHECK(load_safetensors(path).at("keys").to_vector() == key_values);
  const nn::KnnDatastore read = nn::KnnDatastore::load(path);
  CHECK(read.lists() == kLists);
  const auto reread = read.nearest(queries, kK, kProbes);
  for (int64_t r = 0; r < kQueries; ++r)
    for (int64_t j = 0; j < kK; ++j) CHECK(reread[r][j].key == found[r][j].key);
  save_safetensors(path, {{"keys", keys}, {"values", from_vector(values, {kKeys})}, {"centroids", lists.centroids},
                          {"key_lists", from_vector(std::vector<int64_t>(kKeys, kLists), {kKeys})}});
  CHECK_THROWS_WITH(nn::KnnDatastore::load(path), Catch::Contains("row 0 is in list 16, not one of the 16"));
  save_safetensors(path, {{"keys", keys}, {"values", from_vector(values, {kKeys})}, {"centroids", lists.centroids}});
  CHECK_THROWS_WITH(nn::KnnDatastore::load(path), Catch::Contains(path) && Catch::Contains("key_lists"));
}

TEST_CASE("a datastore built with lists: the teacher-forced keys split, too many lists refused") {
  manual_seed(5);
  nn::EncoderDecoderModel model(tiny_config(12));
  const auto sources = random_sentences({4, 6, 3, 5}, 12, 5), targets = random_sentences({5, 2, 7, 6}, 12, 6);
  const nn::KnnDatastore full = nn::KnnDatastore::build(model, sources, targets);
  const nn::KnnDatastore listed = nn::KnnDatastore::build(model, sources, targets, {.reduced_dims = 3, .lists = 4});
  CHECK(listed.lists() == 4);
  CHECK(listed.key_dim() == 3);
  CHECK(listed.size() == full.size());
  CHECK_THROWS_WITH(nn::KnnDatastore::build(model, sources, targets, {.lists = full.size() + 1}),
                    Catch::Contains(fmt::format("cannot split {} keys into {} lists", full.size(), full.size() + 1)));
}

TEST_CASE("the keys' variance, and a relative temperature that makes eq. 2 independent of the keys' scale") {
  // Keys spread 3 around an offset of 5: σ² against a double-precision two-pass computation.
  constexpr int64_t kKeys = 500, kDim = 4;
  const auto [unit_keys, queries, values] = random_keys(kKeys, kDim, 3, 17);
  const Tensor keys = unit_keys * 3.0 + 5.0;
  const std::vector<double> k = keys.to_vector();
  std::vector<double> mean(kDim, 0.0);
  for (int64_t i = 0; i < kKeys; ++i)
    for (int64_t d = 0; d < kDim; ++d) mean[size_t(d)] += k[size_t(i * kDim + d)] / kKeys;
  double variance = 0.0;
  for (int64_t i = 0; i < kKeys; ++i)
    for (int64_t d = 0; d < kDim; ++d) variance += std::pow(k[size_t(i * kDim + d)] - mean[size_t(d)], 2) / kKeys;
  nn::KnnDatastore store(keys, values);
  CHECK(store.key_variance() == Approx(variance).epsilon(1e-12));
  CHECK(variance == Approx(kDim * 9.0).epsilon(0.15));  // the keys' spread, roughly
  CHECK(nn::knn_relative_temperature(store, 0.07) == Approx(0.07 * variance).epsilon(1e-12));
  // Lists reorder the keys, a file stores them: neither changes σ².
  store.split_into_lists(8);
  CHECK(store.key_variance() == Approx(variance).epsilon(1e-12));
  test::TempDir dir;
  store.save(dir.file("store.safetensors"), {});
  CHECK(nn::KnnDatastore::load(dir.file("store.safetensors")).key_variance() == Approx(variance).epsilon(1e-12));

  // Keys and queries scaled by 10: squared distances by 100, and so T = τσ²; the neighbours'
  // distribution is the same, where a fixed T would sharpen it.
  const nn::KnnDatastore scaled(keys * 10.0, values);
  CHECK(scaled.key_variance() == Approx(100 * variance).epsilon(1e-6));
  const auto near = nn::KnnDatastore(keys, values).nearest(queries, 8);
  const auto scaled_near = scaled.nearest(queries * 10.0, 8);
  for (size_t r = 0; r < near.size(); ++r) {
    const auto votes = nn::knn_distribution(store, near[r], nn::knn_relative_temperature(store, 0.07));
    const auto scaled_votes = nn::knn_distribution(scaled, scaled_near[r], nn::knn_relative_temperature(scaled, 0.07));
    REQUIRE(votes.size() == scaled_votes.size());
    for (size_t j = 0; j < votes.size(); ++j) {
      CHECK(scaled_votes[j].first == votes[j].first);
      CHECK(scaled_votes[j].second == Approx(votes[j].second).epsilon(1e-4));
    }
  }

  // Reduced keys keep the share of the states' variance their projection keeps (PCA).
  manual_seed(5);
  nn::EncoderDecoderModel model(tiny_config(12));
  const auto sources = random_sentences({4, 6, 3, 5}, 12, 5), targets = random_sentences({5, 2, 7, 6}, 12, 6);
  const nn::KnnDatastore full = nn::KnnDatastore::build(model, sources, targets);
  const nn::KnnDatastore reduced = nn::KnnDatastore::build(model, sources, targets, {.reduced_dims = 3});
  CHECK(reduced.key_variance() == Approx(*reduced.kept_variance() * full.key_variance()).epsilon(1e-4));

  // Equal keys have no variance: no relative temperature; τ must be positive.
  const nn::KnnDatastore equal(attn::full({3, 2}, 1.5), {1, 2, 3});
  CHECK_THROWS_WITH(nn::knn_relative_temperature(equal, 0.07), Catch::Contains("keys that differ"));
  CHECK_THROWS_WITH(nn::knn_relative_temperature(store, 0.0), Catch::Contains("tau > 0"));
}
