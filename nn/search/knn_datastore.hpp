// kNN-MT (Khandelwal et al. 2021, "Nearest Neighbor Machine Translation"; docs/models.md
// §1.10.1): decoding that consults a memory of the decoder's own states on a parallel corpus.
//
// The datastore (§2, "Datastore creation") has one entry per target token of the corpus: the
// key is the decoder's output state when that token was next (the output projection's input,
// teacher-forced), the value the token. While decoding (§2, "Inference"), the k keys nearest
// to the current state in squared L2 distance vote for their values:
//   p_kNN(v) = Σ_{j ≤ k, value_j = v} exp(−d_j / T) / Σ_{j ≤ k} exp(−d_j / T)     (eq. 2)
// and the next-token distribution is the interpolation
//   p(v) = λ p_kNN(v) + (1 − λ) p_model(v)                                         (eq. 3).
// The search is exact (every key compared; the products of queries and keys on GEMM, in
// chunks of keys), on the CPU, unless the keys are split into k-means lists (inverted_lists.hpp)
// and a search probes fewer lists than there are: then it compares each query with the keys of
// its `probes` nearest lists only. Optionally the keys are reduced to fewer dimensions by PCA
// (principal_axes.hpp) when the datastore is built, and each query is projected the same way
// before the search: the distances are then those of the projections, and the search costs
// what the reduced dimension costs (the demo: 128 → 64, half the products, the same BLEU
// within noise; README "Tuning runs").
//
// The temperature T of eq. 2 divides squared distances, so the T that suits one model is too
// sharp or too flat for another whose states are spread wider or narrower (the demo's keys have
// 3.2 times the variance after 18,000 updates with weight decay as after 7,000 without). A
// relative temperature τ states T in the keys' own unit, T = τ · σ², with σ² the keys' variance
// (their mean squared distance from their mean, in the space the search compares them in):
// knn_relative_temperature.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "nn/search/inverted_lists.hpp"

namespace attn::nn {

class EncoderDecoderModel;

struct KnnNeighbor {
  int64_t key;     // index into the datastore
  float distance;  // squared L2
};

// How KnnDatastore::build makes its keys.
struct KnnBuildOptions {
  int64_t batch_sentences = 64;  // pairs per teacher-forced batch
  int64_t reduced_dims = 0;      // > 0 (at most the states' size): keys on that many principal axes
  int64_t lists = 0;             // > 0 (at most the keys): keys split into that many k-means lists
};

class KnnDatastore {
 public:
  // keys float32 [N, d]; values[i] is the token that followed the state keys[i]. With a
  // projection (float32 [D, d]) the keys are already projected and queries [B, D] are projected
  // by it before the search; without one d = D. kept_variance: the share of the states'
  // variance the projection keeps (principal_axes), when it is known.
  KnnDatastore(Tensor keys, std::vector<int64_t> values, Tensor projection = Tensor(),
               std::optional<double> kept_variance = std::nullopt);

  // One teacher-forced pass of `model` (put in eval mode; no gradients) over the pairs
  // (token ids, each ending in </s>): one entry per target token, </s> included.
  static KnnDatastore build(EncoderDecoderModel& model, const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets, const KnnBuildOptions& options = {});

  // Splits the keys into k-means lists (build_inverted_lists) for searches that probe fewer
  // lists than `lists`; their neighbours' indices stay those of the keys as given.
  void split_into_lists(int64_t lists);

  // A safetensors file of the keys ("keys", float32 [N, d], in their given order), values
  // ("values", int64 [N]), the projection if any ("projection", float32 [D, d]) and its kept
  // variance if known ("kept_variance", float64 [1]), the lists if any ("centroids", float32
  // [L, d], and "key_lists", int64 [N]: each key's list), with `metadata` (written atomically);
  // load checks they agree (and that the numbers are finite, the values non-negative) and
  // gives the metadata back.
  void save(const std::string& path, const std::map<std::string, std::string>& metadata) const;
  static KnnDatastore load(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

  int64_t size() const { return int64_t(values_.size()); }
  int64_t dim() const { return projection_.defined() ? projection_.size(0) : keys_.size(1); }  // of a query
  int64_t key_dim() const { return keys_.size(1); }  // of a stored key: dim(), or the reduced one
  int64_t value(int64_t key) const { return values_[size_t(key)]; }
  int64_t largest_value() const { return values_.empty() ? -1 : *std::max_element(values_.begin(), values_.end()); }
  int64_t lists() const { return int64_t(list_offsets_.empty() ? 0 : list_offsets_.size() - 1); }  // 0: none
  // [N, key_dim()], projected if reduced; with lists, grouped by list: row i is key key_id(i).
  const Tensor& keys() const { return keys_; }
  int64_t key_id(int64_t row) const { return key_ids_.empty() ? row : key_ids_[size_t(row)]; }
  const Tensor& projection() const { return projection_; }  // [dim(), key_dim()], or undefined
  // The share of the states' variance in the keys: 1 without a projection; with one, what the
  // build measured, or nullopt when a file does not record it.
  std::optional<double> kept_variance() const { return kept_variance_; }
  // σ²: the keys' mean squared distance from their mean, as stored (projected if reduced).
  double key_variance() const { return key_variance_; }

  // The k (at most size()) nearest keys of each row of queries [B, D], nearest first; equal
  // distances keep the lower key index first. With lists and 0 < probes < lists(): the k
  // nearest among the keys of each query's `probes` nearest lists (fewer when those lists hold
  // fewer keys); otherwise all keys.
  std::vector<std::vector<KnnNeighbor>> nearest(const Tensor& queries, int64_t k, int64_t probes = 0) const;

 private:
  Tensor keys_;                   // float32 [N, d], CPU
  Tensor projection_;             // float32 [D, d], CPU, or undefined (d = D)
  std::optional<double> kept_variance_;
  double key_variance_ = 0.0;
  std::vector<float> key_norms_;  // |key|², in the order of keys_
  std::vector<int64_t> values_;   // by key index
  // With lists: keys_ grouped by list (list l in rows list_offsets_[l] … list_offsets_[l+1] − 1),
  // key_ids_[row] the index of the key in that row, centroids_ [L, d]. Empty without.
  Tensor centroids_;
  std::vector<int64_t> list_offsets_, key_ids_;

  void use_lists(const InvertedLists& lists);
  Tensor keys_in_given_order() const;
  std::vector<std::vector<KnnNeighbor>> nearest_in_lists(const Tensor& q, const std::vector<float>& query_norms,
                                                         int64_t k, int64_t probes) const;
};

// A datastore and how decoding consults it (generate's --knn-* options).
struct KnnRetrieval {
  std::shared_ptr<const KnnDatastore> datastore;
  int64_t k = 16;
  double temperature = 10.0;  // T of eq. 2
  double lambda = 0.4;        // λ of eq. 3
  int64_t probes = 32;        // lists searched per query when the datastore has lists (0 or ≥ lists: all keys)
};

// T = τ · σ² for a relative temperature τ > 0 (the header's note); throws when the keys have no
// variance (all equal), where no τ gives a temperature.
double knn_relative_temperature(const KnnDatastore& store, double relative);

// Throws, naming `who`, unless `retrieval` has a datastore, T > 0 and 0 <= λ <= 1.
void check_retrieval(const KnnRetrieval& retrieval, const char* who);

// eq. 2 for one query: each token its neighbours (nearest first, as nearest() gives them) hold,
// with its probability — the neighbours' summed weights softmax(−distance / T) — in the order
// the tokens first appear among the neighbours.
std::vector<std::pair<int64_t, double>> knn_distribution(const KnnDatastore& store,
                                                         const std::vector<KnnNeighbor>& neighbours,
                                                         double temperature);

// log p of eq. 3 for each row: features [B, D] (the decoder's output states), log_probs
// [B, V] (the model's); the result on log_probs' device.
Tensor interpolate_knn(const KnnRetrieval& retrieval, const Tensor& features, const Tensor& log_probs);

}  // namespace attn::nn
