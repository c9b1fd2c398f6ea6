// kNN-MT datastores kept in a file (`generate --knn-datastore-file`): the teacher-forced pass
// over a split runs once per model and corpus, later decodes (another k, T or λ) read the
// keys back. The file records what it was built from — a checksum of the model's weights and
// of the split's two binarized files — and is rebuilt when either differs.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "apps/task/translation_task.hpp"
#include "nn/search/knn_datastore.hpp"

namespace attn::app {

// What a datastore depends on: {"model": weights checksum, "source"/"target": the split's
// binarized files' checksums}, "reduced_dims" when its keys are reduced (> 0) and "lists" when
// they are split into lists (> 0).
std::map<std::string, std::string> knn_datastore_identity(const nn::EncoderDecoderModel& model,
                                                          const SplitCorpora& pairs,
                                                          const nn::KnnBuildOptions& options = {});

// A datastore and, in words, where it came from ("read from F", "written to F", …).
struct KnnDatastoreFromFile {
  std::shared_ptr<const nn::KnnDatastore> datastore;
  std::string origin;
};

// The datastore of `pairs` under `model`, built with `options`: read from `file` when it exists
// with the same identity, otherwise built (KnnDatastore::build) and, when `file` is not empty,
// written there (its folder made when missing).
KnnDatastoreFromFile knn_datastore_for(nn::EncoderDecoderModel& model, const SplitCorpora& pairs,
                                       const std::string& file, const nn::KnnBuildOptions& options = {});

// The datastore kept in `file` (by generate --knn-datastore-file or the demo), for decoding
// with `model` without the corpus it was built from (translate): refused, naming the file, when
// it is missing, was built with other weights, or holds values beyond the model's symbols.
KnnDatastoreFromFile read_knn_datastore(const nn::EncoderDecoderModel& model, const std::string& file);

// A datastore's keys in words: "64 numbers (PCA of the 128-number states, 89.4% of their
// variance) in 1024 lists", or "128 numbers" when they are the states themselves.
std::string describe_knn_keys(const nn::KnnDatastore& store);

// The temperature that `tau` gives on `store` (nn::knn_relative_temperature, T = τ·σ²) in words:
// "12.3456789 (= 0.5 × key variance 24.6912)" — T to every digit, so that passing it to
// --knn-temperature makes the same search, and σ² to 6.
std::string describe_knn_relative_temperature(const nn::KnnDatastore& store, double tau);

}  // namespace attn::app
