// kNN-MT retrieval (nn/search/knn_datastore.hpp) at the demo's scale: a datastore of 240,000
// keys of 128 numbers (the demo's 240,522 decoder states of the training pairs), k 16, and a
// batch of queries per search step (5: one sentence's beam; 100 and 500: the beams of a
// decoding batch). Keys are random normal; each query is a key plus noise of a tenth of the
// keys' scale, as a decoder state lies near the states of similar training contexts (the
// nearest keys are then much nearer than the rest, which the search's block bound exploits).
// Reports queries/s for `nearest` and for `interpolate_knn` (search + eqs. 2–3 over a
// vocabulary of 8,000), 1 and 2 threads.
//   build/bench/bench_knn --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "apps/cli/runtime_environment.hpp"
#include "core/ops.hpp"
#include "core/threads.hpp"
#include "nn/search/knn_datastore.hpp"

namespace {

using attn::Tensor;

constexpr int64_t kKeys = 240000, kDim = 128, kVocab = 8000, kNeighbours = 16;

std::shared_ptr<const attn::nn::KnnDatastore> datastore() {
  static const auto store = [] {
    attn::Generator gen(1);
    std::vector<int64_t> values(static_cast<size_t>(kKeys));
    for (int64_t i = 0; i < kKeys; ++i) values[size_t(i)] = (i * 7919) % kVocab;
    return std::make_shared<const attn::nn::KnnDatastore>(
        attn::normal({kKeys, kDim}, 0, 1, attn::DType::Float32, &gen), std::move(values));
  }();
  return store;
}

// `rows` queries: keys spread over the store, plus noise N(0, 0.1²).
Tensor queries(int64_t rows) {
  attn::Generator gen(2);
  std::vector<int64_t> picks(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) picks[size_t(r)] = (r * 104729) % kKeys;
  const Tensor near = attn::ops::index_select(datastore()->keys(), 0, attn::from_vector(picks, {rows}));
  return attn::ops::add(near, attn::normal({rows, kDim}, 0, 0.1, attn::DType::Float32, &gen)).contiguous();
}

void bench_nearest(benchmark::State& state, int64_t rows, int threads) {
  attn::set_num_threads(threads);
  const auto store = datastore();
  const Tensor q = queries(rows);
  for (auto _ : state) benchmark::DoNotOptimize(store->nearest(q, kNeighbours));
  state.counters["queries/s"] = benchmark::Counter(double(state.iterations() * rows), benchmark::Counter::kIsRate);
}

void bench_interpolate(benchmark::State& state, int64_t rows, int threads) {
  attn::set_num_threads(threads);
  const attn::nn::KnnRetrieval retrieval{datastore(), kNeighbours, 20.0, 0.4};
  const Tensor q = queries(rows);
  const Tensor log_probs = attn::ops::log_softmax(attn::normal({rows, kVocab}, 0, 1), -1);
  for (auto _ : state) benchmark::DoNotOptimize(attn::nn::interpolate_knn(retrieval, q, log_probs));
  state.counters["queries/s"] = benchmark::Counter(double(state.iterations() * rows), benchmark::Counter::kIsRate);
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);  // the OpenBLAS kernels and OpenMP waits attnlab itself runs with
  for (int threads : {1, 2})
    for (int64_t rows : {5, 100, 500}) {
      const std::string suffix = "/rows:" + std::to_string(rows) + "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(("nearest" + suffix).c_str(), bench_nearest, rows, threads)->UseRealTime();
      benchmark::RegisterBenchmark(("interpolate_knn" + suffix).c_str(), bench_interpolate, rows, threads)
          ->UseRealTime();
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
