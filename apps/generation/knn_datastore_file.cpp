#include "apps/generation/knn_datastore_file.hpp"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "apps/training/checkpoint.hpp"
#include "apps/training/data_parallel.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {

std::map<std::string, std::string> knn_datastore_identity(const nn::EncoderDecoderModel& model,
                                                          const SplitCorpora& pairs) {
  return {{"model", fmt::format("fnv1a64:{:016x}", values_checksum(model.parameters()))},
          {"source", file_checksum(pairs.source.path())},
          {"target", file_checksum(pairs.target.path())}};
}

std::shared_ptr<const nn::KnnDatastore> knn_datastore_for(nn::EncoderDecoderModel& model, const SplitCorpora& pairs,
                                                          const std::string& file) {
  const std::map<std::string, std::string> identity = knn_datastore_identity(model, pairs);
  if (!file.empty() && std::filesystem::exists(file)) {
    std::map<std::string, std::string> recorded;
    auto stored = std::make_shared<const nn::KnnDatastore>(nn::KnnDatastore::load(file, &recorded));
    if (recorded == identity) {
      std::cerr << fmt::format("kNN-MT datastore: read from {}\n", file);
      return stored;
    }
    std::cerr << fmt::format("kNN-MT datastore: {} was built from another model or corpus; building it again\n", file);
  }
  auto built = std::make_shared<const nn::KnnDatastore>(
      nn::KnnDatastore::build(model, pairs.source.sentences(), pairs.target.sentences()));
  if (!file.empty()) {
    built->save(file, identity);
    std::cerr << fmt::format("kNN-MT datastore: written to {}\n", file);
  }
  return built;
}

}  // namespace attn::app
