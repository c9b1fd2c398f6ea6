// kNN-MT's IVF search (nn/search/inverted_lists.hpp) on real decoder states: for each number
// of k-means lists and of lists probed, the time to split the keys, the queries/s of the
// search and its recall — the share of the exact k nearest keys it finds. The keys are a
// datastore file without lists (what `generate --knn-datastore train --knn-datastore-file F`
// writes, with or without --knn-reduced-dims); the queries are the keys of another datastore
// file, the full decoder states of another split (teacher-forced: states like those a decode
// produces), searched in batches as a decode's beams are. The demo's, for example:
//   attnlab generate demo/data-bin --path demo/checkpoints/checkpoint_avg --gen-subset valid --beam 1
//       --quiet --knn-datastore valid --knn-datastore-file valid_states.safetensors
//   build/bench/bench_knn_lists --keys demo/gen/knn_datastore.safetensors --queries valid_states.safetensors
// Options: --lists 256,1024 --probes 4,8,16,32,64 --k 16 --batch 640 --threads 2.
#include <chrono>
#include <set>
#include <vector>

#include <fmt/core.h>

#include "apps/cli/runtime_environment.hpp"
#include "bench/bench_args.hpp"
#include "core/threads.hpp"
#include "nn/search/knn_datastore.hpp"

namespace {

using attn::Tensor;
using attn::nn::KnnDatastore;
using attn::nn::KnnNeighbor;
using Neighbours = std::vector<std::vector<KnnNeighbor>>;

struct Search {
  Neighbours found;
  double seconds = 0;
};

Search search_all(const KnnDatastore& store, const Tensor& queries, int64_t k, int64_t probes, int64_t batch) {
  Search out;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t lo = 0; lo < queries.size(0); lo += batch) {
    Neighbours part = store.nearest(queries.narrow(0, lo, std::min(batch, queries.size(0) - lo)), k, probes);
    out.found.insert(out.found.end(), part.begin(), part.end());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

double recall(const Neighbours& found, const Neighbours& exact) {
  int64_t hits = 0, total = 0;
  for (size_t r = 0; r < exact.size(); ++r) {
    std::set<int64_t> truth;
    for (const KnnNeighbor& n : exact[r]) truth.insert(n.key);
    for (const KnnNeighbor& n : found[r]) hits += truth.count(n.key);
    total += int64_t(truth.size());
  }
  return double(hits) / double(total);
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);
  attn::bench::BenchArgs args("bench_knn_lists", argc, argv);
  const std::string keys_file = args.text("keys", ""), queries_file = args.text("queries", "");
  const std::vector<int64_t> lists = args.numbers("lists", {256, 1024});
  const std::vector<int64_t> probes = args.numbers("probes", {4, 8, 16, 32, 64});
  const int64_t k = args.number("k", 16), batch = args.number("batch", 640);
  attn::set_num_threads(int(args.number("threads", 2)));
  args.check_all_used();
  ATTN_CHECK(!keys_file.empty() && !queries_file.empty(), "bench_knn_lists: needs --keys FILE and --queries FILE");

  const KnnDatastore store = KnnDatastore::load(keys_file);
  ATTN_CHECK(store.lists() == 0, "bench_knn_lists: {} is split into lists already", keys_file);
  const Tensor queries = KnnDatastore::load(queries_file).keys();
  const Search exact = search_all(store, queries, k, 0, batch);
  fmt::print("{} keys of {} numbers, {} queries of {} in batches of {}, k {}\n\n", store.size(), store.key_dim(),
             queries.size(0), queries.size(1), batch, k);
  fmt::print("| lists | split (s) | probes | recall@{} | queries/s |\n|---|---|---|---|---|\n", k);
  fmt::print("| – (exact) | – | – | 1.000 | {:.0f} |\n", double(queries.size(0)) / exact.seconds);
  for (int64_t count : lists) {
    KnnDatastore split = store;
    const auto start = std::chrono::steady_clock::now();
    split.split_into_lists(count);
    const double split_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (int64_t p : probes) {
      if (p >= count) continue;
      const Search approximate = search_all(split, queries, k, p, batch);
      fmt::print("| {} | {:.1f} | {} | {:.3f} | {:.0f} |\n", count, split_seconds, p,
                 recall(approximate.found, exact.found), double(queries.size(0)) / approximate.seconds);
    }
  }
}
