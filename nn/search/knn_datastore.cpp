#include "nn/search/knn_datastore.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>

#include "autograd/autograd.hpp"
#include "core/ops.hpp"
#include "core/safetensors.hpp"
#include "nn/search/principal_axes.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::nn {
namespace {

constexpr int64_t kKeysPerChunk = 8192;  // keys per GEMM: a [B, 8192] block of products

// Nearer first; equal distances by key index, so the result does not depend on chunking.
bool nearer(const KnnNeighbor& a, const KnnNeighbor& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.key < b.key);
}

// Offers `count` keys to `heap` (a max-heap under `nearer` of at most k neighbours): their
// squared distances |q|² + (|key|² − 2 q·key) from one query's norm and products; key j's index
// is ids[j], or first_id + j without ids. A key as near as the heap's farthest enters only with
// the lower index, so the result does not depend on the order keys are offered in. Most keys
// are farther than that farthest: a block's minimum (a vector reduction) rules out a whole
// block at once.
void offer_chunk(std::vector<KnnNeighbor>& heap, int64_t k, float query_norm, const float* products,
                 const float* key_norms, const int64_t* ids, int64_t first_id, int64_t count) {
  constexpr int64_t kBlock = 64;
  float bound = int64_t(heap.size()) < k ? std::numeric_limits<float>::infinity() : heap.front().distance;
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    const int64_t end = std::min(count, begin + kBlock);
    float block_min = std::numeric_limits<float>::infinity();
#pragma omp simd reduction(min : block_min)
    for (int64_t j = begin; j < end; ++j) block_min = std::min(block_min, key_norms[j] - 2.0f * products[j]);
    if (query_norm + block_min > bound) continue;  // rounding is monotone: no key of the block is nearer
    for (int64_t j = begin; j < end; ++j) {
      const float distance = query_norm + (key_norms[j] - 2.0f * products[j]);
      if (!(distance <= bound)) continue;  // farther than the k kept (or not a number)
      const KnnNeighbor candidate{ids ? ids[j] : first_id + j, distance};
      const bool full = int64_t(heap.size()) == k;
      if (full && !nearer(candidate, heap.front())) continue;  // as near, with a higher index
      if (full) {
        std::pop_heap(heap.begin(), heap.end(), nearer);
        heap.pop_back();
      }
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end(), nearer);
      if (int64_t(heap.size()) == k) bound = heap.front().distance;
    }
  }
}

// The mean squared distance of the rows of `keys` [N, d] from their mean, summed in double.
double mean_squared_deviation(const Tensor& keys) {
  const int64_t n = keys.size(0), d = keys.size(1);
  const float* p = keys.data<float>();
  std::vector<double> mean(static_cast<size_t>(d), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) mean[size_t(j)] += p[i * d + j];
  for (double& m : mean) m /= double(n);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) total += (p[i * d + j] - mean[size_t(j)]) * (p[i * d + j] - mean[size_t(j)]);
  return total / double(n);
}

// The pairs `pairs` (indices) as one batch the way the trainer pads them: sources left-padded,
// previous outputs (</s> y_1 … y_{n−1}) right-padded.
struct TeacherForcedBatch {
  Tensor src_tokens, prev_output_tokens;
};

TeacherForcedBatch pad_batch(const std::vector<std::vector<int64_t>>& sources,
                             const std::vector<std::vector<int64_t>>& targets, std::span<const size_t> pairs,
                             const TransformerConfig& config) {
  size_t src_len = 0, tgt_len = 0;
  for (size_t i : pairs) {
    src_len = std::max(src_len, sources[i].size());
    tgt_len = std::max(tgt_len, targets[i].size());
  }
  const size_t rows = pairs.size();
  std::vector<int64_t> src(rows * src_len, config.padding_idx), prev(rows * tgt_len, config.padding_idx);
  for (size_t r = 0; r < rows; ++r) {
    const std::vector<int64_t>& s = sources[pairs[r]];
    const std::vector<int64_t>& t = targets[pairs[r]];
    std::copy(s.begin(), s.end(), src.begin() + std::ptrdiff_t(r * src_len + src_len - s.size()));
    prev[r * tgt_len] = config.eos_idx;
    std::copy(t.begin(), t.end() - 1, prev.begin() + std::ptrdiff_t(r * tgt_len + 1));
  }
  return {from_vector(src, Shape{int64_t(rows), int64_t(src_len)}),
          from_vector(prev, Shape{int64_t(rows), int64_t(tgt_len)})};
}

// A damaged or hand-edited datastore file: a NaN number wins or loses every search silently,
// and a negative value votes for no token.
void check_finite_numbers(const Tensor& t, const std::string& path, const char* name) {
  const float* x = t.data<float>();
  const float* bad = std::find_if(x, x + t.numel(), [](float v) { return !std::isfinite(v); });
  ATTN_CHECK(bad == x + t.numel(), "{}: {} holds a NaN or infinite number (at flat index {}): a damaged datastore; "
             "delete it to build it again", path, name, bad - x);
}

void check_token_ids(const int64_t* values, int64_t count, const std::string& path) {
  const int64_t* bad = std::find_if(values, values + count, [](int64_t v) { return v < 0; });
  ATTN_CHECK(bad == values + count, "{}: value {} is {}, not a token id: a damaged datastore; delete it to build it "
             "again", path, bad - values, bad == values + count ? 0 : *bad);
}

}  // namespace

KnnDatastore::KnnDatastore(Tensor keys, std::vector<int64_t> values, Tensor projection,
                           std::optional<double> kept_variance)
    : keys_(keys.to(Device::cpu()).to(DType::Float32).contiguous()),
      kept_variance_(projection.defined() ? kept_variance : 1.0),
      values_(std::move(values)) {
  ATTN_CHECK(keys_.dim() == 2 && keys_.size(0) == int64_t(values_.size()),
             "KnnDatastore: keys {} do not match {} values", keys_.shape().str(), values_.size());
  if (projection.defined()) {
    projection_ = projection.to(Device::cpu()).to(DType::Float32).contiguous();
    ATTN_CHECK(projection_.dim() == 2 && projection_.size(1) == keys_.size(1),
               "KnnDatastore: the projection {} does not map onto keys {}", projection_.shape().str(),
               keys_.shape().str());
  }
  key_norms_ = squared_norms(keys_);
  key_variance_ = keys_.size(0) > 0 ? mean_squared_deviation(keys_) : 0.0;
}

KnnDatastore KnnDatastore::build(EncoderDecoderModel& model, const std::vector<std::vector<int64_t>>& sources,
                                 const std::vector<std::vector<int64_t>>& targets, const KnnBuildOptions& options) {
  ATTN_CHECK(sources.size() == targets.size() && !targets.empty() && options.batch_sentences > 0 &&
                 options.reduced_dims >= 0 && options.lists >= 0,
             "KnnDatastore::build: {} sources and {} targets (batches of {}, reduced to {} dims, {} lists)",
             sources.size(), targets.size(), options.batch_sentences, options.reduced_dims, options.lists);
  // Keys in corpus order: pair i's first key at first_key[i]. The pairs are batched by length
  // (target, then source), which pads the demo's corpus by 1.01-1.15x instead of 2.2-2.4x in
  // corpus order; each pair's states do not depend on its batch (padding is masked).
  std::vector<int64_t> values;
  std::vector<size_t> first_key(sources.size()), by_length(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    ATTN_CHECK(!sources[i].empty() && !targets[i].empty(), "KnnDatastore::build: pair {} is empty", i);
    first_key[i] = values.size();
    values.insert(values.end(), targets[i].begin(), targets[i].end());
  }
  std::iota(by_length.begin(), by_length.end(), size_t(0));
  std::stable_sort(by_length.begin(), by_length.end(), [&](size_t a, size_t b) {
    return std::pair(targets[a].size(), sources[a].size()) < std::pair(targets[b].size(), sources[b].size());
  });
  model.eval();
  NoGradGuard no_grad;
  const Device device = model.parameters().front().device();
  std::vector<float> keys;
  int64_t dim = 0;
  for (size_t begin = 0; begin < by_length.size(); begin += size_t(options.batch_sentences)) {
    const std::span<const size_t> pairs(by_length.data() + begin,
                                        std::min(by_length.size() - begin, size_t(options.batch_sentences)));
    const TeacherForcedBatch batch = pad_batch(sources, targets, pairs, model.config());
    const Tensor host = model.extract_features(batch.src_tokens.to(device), batch.prev_output_tokens.to(device))
                            .to(Device::cpu())
                            .to(DType::Float32)
                            .contiguous();  // [B, T, D]
    dim = host.size(2);
    keys.resize(values.size() * size_t(dim));
    const float* p = host.data<float>();
    for (size_t r = 0; r < pairs.size(); ++r) {
      const float* row = p + int64_t(r) * host.size(1) * dim;
      std::copy_n(row, int64_t(targets[pairs[r]].size()) * dim, keys.begin() + int64_t(first_key[pairs[r]]) * dim);
    }
  }
  Tensor key_matrix = from_vector(keys, Shape{int64_t(values.size()), dim});  // before values is moved from
  KnnDatastore store = [&] {
    if (options.reduced_dims == 0) return KnnDatastore(std::move(key_matrix), std::move(values));
    ATTN_CHECK(options.reduced_dims <= dim,
               "KnnDatastore::build: cannot reduce the model's {}-number states to {} dims", dim,
               options.reduced_dims);
    const PrincipalAxes principal = principal_axes(key_matrix, options.reduced_dims);
    return KnnDatastore(ops::matmul(key_matrix, principal.axes), std::move(values), principal.axes,
                        principal.kept_variance);
  }();
  if (options.lists > 0) {
    ATTN_CHECK(options.lists <= store.size(), "KnnDatastore::build: cannot split {} keys into {} lists",
               store.size(), options.lists);
    store.split_into_lists(options.lists);
  }
  return store;
}

Tensor KnnDatastore::keys_in_given_order() const {
  if (key_ids_.empty()) return keys_;
  const int64_t n = size(), d = key_dim();
  std::vector<float> given(static_cast<size_t>(n * d));
  const float* p = keys_.data<float>();
  for (int64_t row = 0; row < n; ++row) std::copy_n(p + row * d, d, given.begin() + key_ids_[size_t(row)] * d);
  return from_vector(given, Shape{n, d});
}

void KnnDatastore::split_into_lists(int64_t lists) {
  ATTN_CHECK(this->lists() == 0, "KnnDatastore: the keys are split into lists already");
  use_lists(build_inverted_lists(keys_, lists));
}

void KnnDatastore::use_lists(const InvertedLists& lists) {
  const int64_t n = size(), d = key_dim();
  ATTN_CHECK(int64_t(lists.order.size()) == n && lists.centroids.size(1) == d,
             "KnnDatastore: lists of {} keys with {} centroids do not fit {} keys {}", lists.order.size(),
             lists.centroids.shape().str(), n, keys_.shape().str());
  std::vector<float> grouped(static_cast<size_t>(n * d)), grouped_norms(static_cast<size_t>(n));
  const float* p = keys_.data<float>();
  for (int64_t row = 0; row < n; ++row) {
    const int64_t id = lists.order[size_t(row)];
    std::copy_n(p + id * d, d, grouped.begin() + row * d);
    grouped_norms[size_t(row)] = key_norms_[size_t(id)];
  }
  keys_ = from_vector(grouped, Shape{n, d});
  key_norms_ = std::move(grouped_norms);
  key_ids_ = lists.order;
  list_offsets_ = lists.offsets;
  centroids_ = lists.centroids.contiguous();
}

void KnnDatastore::save(const std::string& path, const std::map<std::string, std::string>& metadata) const {
  NamedTensors tensors{{"keys", keys_in_given_order()}, {"values", from_vector(values_, Shape{size()})}};
  if (projection_.defined()) tensors.emplace_back("projection", projection_);
  if (projection_.defined() && kept_variance_)
    tensors.emplace_back("kept_variance", from_vector(std::vector<double>{*kept_variance_}, Shape{1}));
  if (lists() > 0) {
    std::vector<int64_t> key_lists(static_cast<size_t>(size()));
    for (int64_t list = 0; list < lists(); ++list)
      for (int64_t row = list_offsets_[size_t(list)]; row < list_offsets_[size_t(list) + 1]; ++row)
        key_lists[size_t(key_ids_[size_t(row)])] = list;
    tensors.emplace_back("centroids", centroids_);
    tensors.emplace_back("key_lists", from_vector(key_lists, Shape{size()}));
  }
  save_safetensors(path, tensors, metadata);
}

KnnDatastore KnnDatastore::load(const std::string& path, std::map<std::string, std::string>* metadata) {
  const SafetensorsFile file = load_safetensors(path);
  const Tensor& keys = file.at("keys");
  const Tensor& values = file.at("values");
  ATTN_CHECK(keys.dtype() == DType::Float32 && keys.dim() == 2 && values.dtype() == DType::Int64 &&
                 values.dim() == 1 && values.size(0) == keys.size(0),
             "{}: not a kNN-MT datastore: keys must be float32 [N, D] and values int64 [N], got {} {} and {} {}",
             path, dtype_name(keys.dtype()), keys.shape().str(), dtype_name(values.dtype()), values.shape().str());
  Tensor projection;
  if (file.contains("projection")) {
    projection = file.at("projection");
    ATTN_CHECK(projection.dtype() == DType::Float32 && projection.dim() == 2 && projection.size(1) == keys.size(1),
               "{}: the projection must be float32 [D, {}], got {} {}", path, keys.size(1),
               dtype_name(projection.dtype()), projection.shape().str());
  }
  std::optional<double> kept_variance;
  if (file.contains("kept_variance")) {
    const Tensor& kept = file.at("kept_variance");
    ATTN_CHECK(kept.dtype() == DType::Float64 && kept.numel() == 1 && kept.data<double>()[0] >= 0 &&
                   kept.data<double>()[0] <= 1,
               "{}: kept_variance must be one float64 in [0, 1], got {} {}", path, dtype_name(kept.dtype()),
               kept.shape().str());
    kept_variance = kept.data<double>()[0];
  }
  check_finite_numbers(keys, path, "keys");
  if (projection.defined()) check_finite_numbers(projection, path, "projection");
  if (metadata) *metadata = file.metadata;
  const int64_t* v = values.data<int64_t>();
  check_token_ids(v, values.numel(), path);
  KnnDatastore store(keys, std::vector<int64_t>(v, v + values.numel()), projection, kept_variance);
  if (file.contains("centroids") || file.contains("key_lists")) {
    const Tensor& centroids = file.at("centroids");
    const Tensor& key_lists = file.at("key_lists");
    ATTN_CHECK(centroids.dtype() == DType::Float32 && centroids.dim() == 2 && centroids.size(1) == keys.size(1) &&
                   centroids.size(0) >= 1 && key_lists.dtype() == DType::Int64 && key_lists.dim() == 1 &&
                   key_lists.size(0) == keys.size(0),
               "{}: the lists must be float32 centroids [L, {}] and int64 key_lists [{}], got {} {} and {} {}", path,
               keys.size(1), keys.size(0), dtype_name(centroids.dtype()), centroids.shape().str(),
               dtype_name(key_lists.dtype()), key_lists.shape().str());
    check_finite_numbers(centroids, path, "centroids");
    const int64_t* l = key_lists.data<int64_t>();
    store.use_lists(group_into_lists(centroids, std::vector<int64_t>(l, l + key_lists.numel())));
  }
  return store;
}

std::vector<std::vector<KnnNeighbor>> KnnDatastore::nearest(const Tensor& queries, int64_t k, int64_t probes) const {
  ATTN_CHECK(queries.dim() == 2 && queries.size(1) == dim() && k > 0 && probes >= 0,
             "KnnDatastore::nearest: queries must be [B, {}], k > 0 and probes >= 0, got {}, k = {}, {} probes",
             dim(), queries.shape().str(), k, probes);
  Tensor q = queries.to(Device::cpu()).to(DType::Float32).contiguous();
  if (projection_.defined()) q = ops::matmul(q, projection_);
  const int64_t rows = q.size(0), n = size();
  k = std::min(k, n);
  const std::vector<float> query_norms = squared_norms(q);
  if (probes > 0 && probes < lists()) return nearest_in_lists(q, query_norms, k, probes);
  // Per row a max-heap of the k nearest so far (its front the farthest of them).
  std::vector<std::vector<KnnNeighbor>> best(static_cast<size_t>(rows));
  const int64_t* ids = key_ids_.empty() ? nullptr : key_ids_.data();
  const Tensor products = empty(Shape{rows, std::min(kKeysPerChunk, n)});  // one buffer for every chunk
  const float* d = products.data<float>();
  const int64_t row_stride = products.size(1);
  for (int64_t lo = 0; lo < n; lo += kKeysPerChunk) {
    const int64_t count = std::min(kKeysPerChunk, n - lo);
    ops::matmul_into(q, keys_.narrow(0, lo, count).transpose(0, 1), products.narrow(1, 0, count));
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      offer_chunk(best[size_t(r)], k, query_norms[size_t(r)], d + r * row_stride, key_norms_.data() + lo,
                  ids ? ids + lo : nullptr, lo, count);
  }
  for (std::vector<KnnNeighbor>& heap : best) std::sort_heap(heap.begin(), heap.end(), nearer);
  return best;
}

// The search of the IVF index: each list's keys against the queries that probe it, one product.
std::vector<std::vector<KnnNeighbor>> KnnDatastore::nearest_in_lists(const Tensor& q,
                                                                      const std::vector<float>& query_norms,
                                                                      int64_t k, int64_t probes) const {
  const int64_t rows = q.size(0), d = key_dim();
  std::vector<std::vector<int64_t>> asking(static_cast<size_t>(lists()));  // per list, the queries that probe it
  const std::vector<std::vector<int64_t>> probed = nearest_lists(centroids_, q, probes);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t list : probed[size_t(r)]) asking[size_t(list)].push_back(r);
  int64_t most_asking = 0, longest = 0;  // the largest product of one list
  for (int64_t list = 0; list < lists(); ++list) {
    if (asking[size_t(list)].empty()) continue;
    most_asking = std::max(most_asking, int64_t(asking[size_t(list)].size()));
    longest = std::max(longest, list_offsets_[size_t(list) + 1] - list_offsets_[size_t(list)]);
  }
  std::vector<std::vector<KnnNeighbor>> best(static_cast<size_t>(rows));
  const Tensor gathered = empty(Shape{most_asking, d});
  const Tensor products = empty(Shape{most_asking, std::max<int64_t>(1, longest)});
  const float* queries = q.data<float>();
  for (int64_t list = 0; list < lists(); ++list) {
    const std::vector<int64_t>& askers = asking[size_t(list)];
    const int64_t lo = list_offsets_[size_t(list)], count = list_offsets_[size_t(list) + 1] - lo;
    const int64_t m = int64_t(askers.size());
    if (m == 0 || count == 0) continue;
    float* g = gathered.data<float>();
    for (int64_t j = 0; j < m; ++j) std::copy_n(queries + askers[size_t(j)] * d, d, g + j * d);
    const Tensor out = products.narrow(0, 0, m).narrow(1, 0, count);
    ops::matmul_into(gathered.narrow(0, 0, m), keys_.narrow(0, lo, count).transpose(0, 1), out);
    const float* p = products.data<float>();
    const int64_t stride = products.size(1);
#pragma omp parallel for schedule(static) if (m >= 8)
    for (int64_t j = 0; j < m; ++j) {
      const int64_t r = askers[size_t(j)];
      offer_chunk(best[size_t(r)], k, query_norms[size_t(r)], p + j * stride, key_norms_.data() + lo,
                  key_ids_.data() + lo, 0, count);
    }
  }
  for (std::vector<KnnNeighbor>& heap : best) std::sort_heap(heap.begin(), heap.end(), nearer);
  return best;
}

std::vector<std::pair<int64_t, double>> knn_distribution(const KnnDatastore& store,
                                                         const std::vector<KnnNeighbor>& neighbours,
                                                         double temperature) {
  // Weights shifted by the nearest distance: the same softmax, without every term underflowing.
  std::vector<std::pair<int64_t, double>> votes;
  double total = 0.0;
  for (const KnnNeighbor& neighbour : neighbours) {
    const double weight = std::exp(-(double(neighbour.distance) - double(neighbours[0].distance)) / temperature);
    total += weight;
    const int64_t v = store.value(neighbour.key);
    const auto same = std::find_if(votes.begin(), votes.end(), [v](const auto& vote) { return vote.first == v; });
    if (same == votes.end())
      votes.emplace_back(v, weight);
    else
      same->second += weight;
  }
  for (auto& vote : votes) vote.second /= total;
  return votes;
}

double knn_relative_temperature(const KnnDatastore& store, double relative) {
  ATTN_CHECK(relative > 0.0 && store.key_variance() > 0.0,
             "kNN-MT: a relative temperature needs tau > 0 and keys that differ (got tau = {}, key variance {})",
             relative, store.key_variance());
  return relative * store.key_variance();
}

void check_retrieval(const KnnRetrieval& retrieval, const char* who) {
  ATTN_CHECK(retrieval.datastore != nullptr && retrieval.temperature > 0.0 && retrieval.lambda >= 0.0 &&
                 retrieval.lambda <= 1.0,
             "{}: needs a datastore, a temperature > 0 and 0 <= lambda <= 1 (got T = {}, lambda = {})", who,
             retrieval.temperature, retrieval.lambda);
}

Tensor interpolate_knn(const KnnRetrieval& retrieval, const Tensor& features, const Tensor& log_probs) {
  check_retrieval(retrieval, "kNN-MT");
  ATTN_CHECK(log_probs.dim() == 2 && features.dim() == 2 && features.size(0) == log_probs.size(0),
             "kNN-MT: features {} and log-probabilities {} must be [B, D] and [B, V]", features.shape().str(),
             log_probs.shape().str());
  if (retrieval.lambda == 0.0) return log_probs;
  const KnnDatastore& store = *retrieval.datastore;
  const std::vector<std::vector<KnnNeighbor>> neighbours = store.nearest(features, retrieval.k, retrieval.probes);
  const Tensor model = log_probs.to(Device::cpu()).to(DType::Float32).contiguous();
  const int64_t rows = model.size(0), vocab = model.size(1);
  const float* lp = model.data<float>();
  const double lambda = retrieval.lambda, log_model_weight = std::log1p(-lambda);  // −∞ at λ = 1
  // eq. 3 is log((1 − λ) p_model) for every token no neighbour voted for: a shift of the
  // model's log-probabilities; only the (at most k) voted tokens need the full sum.
  std::vector<float> out(static_cast<size_t>(rows * vocab));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* model_row = lp + r * vocab;
    float* out_row = out.data() + r * vocab;
    for (int64_t v = 0; v < vocab; ++v) out_row[v] = float(double(model_row[v]) + log_model_weight);
    for (const auto& [v, p_knn] : knn_distribution(store, neighbours[size_t(r)], retrieval.temperature))
      if (v >= 0 && v < vocab)
        out_row[v] = float(std::log(lambda * p_knn + (1.0 - lambda) * std::exp(double(model_row[v]))));
  }
  return from_vector(out, Shape{rows, vocab}).to(log_probs.device());
}

}  // namespace attn::nn
