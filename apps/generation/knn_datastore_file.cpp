#include "apps/generation/knn_datastore_file.hpp"

#include <filesystem>

#include <fmt/core.h>

#include "apps/training/checkpoint.hpp"
#include "apps/training/data_parallel.hpp"
#include "data/text_io.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {
namespace {

std::string model_checksum(const nn::EncoderDecoderModel& model) {
  return fmt::format("fnv1a64:{:016x}", values_checksum(model.parameters()));
}

// Refuses a datastore whose values are not all symbols of the model's target vocabulary.
void check_values(const nn::KnnDatastore& stored, const nn::EncoderDecoderModel& model, const std::string& file) {
  const int64_t vocabulary = model.config().tgt_vocab_size, largest = stored.largest_value();
  ATTN_CHECK(largest < vocabulary,
             "{}: the datastore holds token id {}, beyond the model's {} target symbols: a damaged datastore; "
             "delete it to build it again",
             file, largest, vocabulary);
}

}  // namespace

std::map<std::string, std::string> knn_datastore_identity(const nn::EncoderDecoderModel& model,
                                                          const SplitCorpora& pairs,
                                                          const nn::KnnBuildOptions& options) {
  std::map<std::string, std::string> identity{
      {"model", model_checksum(model)},
      {"source", file_checksum(pairs.source.path())},
      {"target", file_checksum(pairs.target.path())}};
  if (options.reduced_dims > 0) identity["reduced_dims"] = std::to_string(options.reduced_dims);
  if (options.lists > 0) identity["lists"] = std::to_string(options.lists);
  return identity;
}

KnnDatastoreFromFile read_knn_datastore(const nn::EncoderDecoderModel& model, const std::string& file) {
  ATTN_CHECK(std::filesystem::exists(file),
             "{}: no such kNN-MT datastore (generate --knn-datastore SPLIT --knn-datastore-file FILE, or the demo, "
             "writes one)",
             file);
  std::map<std::string, std::string> recorded;
  auto stored = std::make_shared<const nn::KnnDatastore>(nn::KnnDatastore::load(file, &recorded));
  ATTN_CHECK(recorded["model"] == model_checksum(model),
             "{}: the datastore was built with other weights than the model's; build it again with this model "
             "(generate --knn-datastore SPLIT --knn-datastore-file FILE)",
             file);
  check_values(*stored, model, file);
  return {std::move(stored), "read from " + file};
}

KnnDatastoreFromFile knn_datastore_for(nn::EncoderDecoderModel& model, const SplitCorpora& pairs,
                                       const std::string& file, const nn::KnnBuildOptions& options) {
  const auto build = [&] {
    return std::make_shared<const nn::KnnDatastore>(
        nn::KnnDatastore::build(model, pairs.source.sentences(), pairs.target.sentences(), options));
  };
  if (file.empty()) return {build(), "built"};
  const std::map<std::string, std::string> identity = knn_datastore_identity(model, pairs, options);
  std::string origin = "written to " + file;
  if (std::filesystem::exists(file)) {
    std::map<std::string, std::string> recorded;
    auto stored = std::make_shared<const nn::KnnDatastore>(nn::KnnDatastore::load(file, &recorded));
    if (recorded == identity) {
      check_values(*stored, model, file);
      return {std::move(stored), "read from " + file};
    }
    origin = file + " was built from another model, corpus, key size or lists; built again and written there";
  }
  auto built = build();
  data::create_folders(std::filesystem::path(file).parent_path().string(), "the kNN-MT datastore's folder");
  built->save(file, identity);
  return {std::move(built), origin};
}

std::string describe_knn_keys(const nn::KnnDatastore& store) {
  std::string keys = fmt::format("{} numbers", store.key_dim());
  if (store.projection().defined()) {
    const std::optional<double> kept = store.kept_variance();
    keys += fmt::format(" (PCA of the {}-number states{})", store.dim(),
                        kept ? fmt::format(", {:.1f}% of their variance", 100 * *kept) : "");
  }
  return store.lists() > 0 ? keys + fmt::format(" in {} lists", store.lists()) : keys;
}

std::string describe_knn_relative_temperature(const nn::KnnDatastore& store, double tau) {
  return fmt::format("{} (= {} × key variance {:.6g})", nn::knn_relative_temperature(store, tau), tau,
                     store.key_variance());
}

}  // namespace attn::app
