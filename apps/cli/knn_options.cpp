#include "apps/cli/knn_options.hpp"

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "apps/generation/knn_datastore_file.hpp"

namespace attn::app {

void add_knn_search_options(CLI::App& cmd, KnnSearchFlags& flags) {
  cmd.add_option("--knn-probes", flags.knn.probes,
                 "kNN-MT: with --knn-lists, search only the keys of each query's P nearest lists (0 or at least "
                 "the lists: all keys)")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--knn-k", flags.knn.k, "kNN-MT: neighbours per step")
      ->check(positive_number())
      ->capture_default_str();
  CLI::Option* absolute_temperature =
      cmd.add_option("--knn-temperature", flags.knn.temperature, "kNN-MT: T of exp(-distance / T)")
          ->check(positive_number())
          ->capture_default_str();
  cmd.add_option("--knn-relative-temperature", flags.relative_temperature,
                 "kNN-MT: T as a multiple of the keys' variance (their mean squared distance from their mean), the "
                 "same sharpness for models whose states spread differently")
      ->check(positive_number())
      ->excludes(absolute_temperature);
  cmd.add_option("--knn-lambda", flags.knn.lambda, "kNN-MT: weight of the neighbours' distribution")
      ->check(number_in_range(0.0, 1.0))
      ->capture_default_str();
}

std::shared_ptr<const nn::KnnRetrieval> knn_retrieval(const KnnSearchFlags& flags,
                                                      std::shared_ptr<const nn::KnnDatastore> datastore) {
  auto retrieval = std::make_shared<nn::KnnRetrieval>(flags.knn);
  retrieval->datastore = std::move(datastore);
  if (flags.relative_temperature)
    retrieval->temperature = nn::knn_relative_temperature(*retrieval->datastore, *flags.relative_temperature);
  return retrieval;
}

std::string describe_knn_search(const KnnSearchFlags& flags, const nn::KnnRetrieval& retrieval,
                                const std::string& where, double seconds) {
  const nn::KnnDatastore& store = *retrieval.datastore;
  const std::string temperature = flags.relative_temperature
                                      ? describe_knn_relative_temperature(store, *flags.relative_temperature)
                                      : fmt::format("{}", retrieval.temperature);
  return fmt::format("kNN-MT datastore: {} keys of {} from '{}' in {:.1f}s (k {}, T {}, lambda {})\n", store.size(),
                     describe_knn_keys(store), where, seconds, retrieval.k, temperature, retrieval.lambda);
}

}  // namespace attn::app
