// fairseq's names of numbered checkpoints (docs/models.md §1.11): `checkpoint<E>` is saved at
// the end of epoch E, `checkpoint_<E>_<U>` every --save-interval-updates (U updates done).
// The one place that writes and reads these names: the trainer saves and rotates them
// (apps/training/checkpoint.cpp), `average` picks the newest (nn/checkpoint_average.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::nn {

enum class CheckpointNumbering { Epoch, Update };

std::string epoch_checkpoint_name(int64_t epoch);                    // "checkpoint3"
std::string update_checkpoint_name(int64_t epoch, int64_t updates);  // "checkpoint_3_1500"

// The number a name (without extension) carries — the epoch of `checkpoint<E>`, the update
// count of `checkpoint_<E>_<U>` — or none when it is not such a name.
std::optional<int64_t> checkpoint_number(const std::string& name, CheckpointNumbering numbering);

// --keep-best-checkpoints: `checkpoint.best_<metric>_<score>_<U>` ("checkpoint.best_loss_3.912_1500"),
// the save at U updates whose validation scored <score> (three decimals, as fairseq's names;
// the update count in place of fairseq's random tie-breaking digit keeps saves of one rounded
// score apart).
std::string best_checkpoint_name(const std::string& metric, double score, int64_t updates);
struct BestCheckpointName {
  std::string metric;
  double score = 0.0;  // as the name rounds it
  int64_t updates = 0;
};
// The parts of such a name (without extension), or none when it is not one.
std::optional<BestCheckpointName> parse_best_checkpoint_name(const std::string& name);

struct NumberedCheckpoint {
  int64_t number = 0;
  std::string path;  // dir / (name + extension)
};
// The files in `dir` named <numbered name><extension>, highest number first. Throws
// attn::Error when the folder cannot be listed.
std::vector<NumberedCheckpoint> numbered_checkpoints(const std::string& dir, CheckpointNumbering numbering,
                                                     const std::string& extension);

}  // namespace attn::nn
