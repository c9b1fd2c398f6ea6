// The kNN-MT search flags shared by generate and translate (nn/search/knn_datastore.hpp,
// docs/models.md §1.10.1): --knn-k, --knn-temperature or --knn-relative-temperature,
// --knn-lambda and --knn-probes. Where the datastore comes from is each command's own.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "nn/search/knn_datastore.hpp"

namespace CLI {
class App;  // <CLI/CLI.hpp>, included only where options are added
}

namespace attn::app {

struct KnnSearchFlags {
  nn::KnnRetrieval knn;                        // k, T, λ and probes as given (no datastore yet)
  std::optional<double> relative_temperature;  // τ of T = τ·σ², if given
};

void add_knn_search_options(CLI::App& cmd, KnnSearchFlags& flags);

// The retrieval of `flags` over `datastore`, T from τ when a relative temperature was given.
std::shared_ptr<const nn::KnnRetrieval> knn_retrieval(const KnnSearchFlags& flags,
                                                      std::shared_ptr<const nn::KnnDatastore> datastore);

// One line for standard error: "kNN-MT datastore: N keys of … from WHERE in 1.2s (k 16, T …, lambda 0.4)".
std::string describe_knn_search(const KnnSearchFlags& flags, const nn::KnnRetrieval& retrieval,
                                const std::string& where, double seconds);

}  // namespace attn::app
