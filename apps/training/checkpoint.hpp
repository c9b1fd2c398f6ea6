// Training checkpoints (docs/design.md §4 "Checkpoints"; docs/models.md §1.11 for the names).
//
// A checkpoint called NAME in a save dir is three files:
//   NAME.safetensors            the model weights under fairseq's names (state_dict());
//                               readable by the Python ecosystem and by `attnlab average`
//   NAME.optimizer.safetensors  the optimizer state (moments, step counts), when saved
//   NAME.json                   everything else (model config, dictionaries, scheduler, RNG,
//                               loader position, counters, best loss: the trainer's
//                               "metadata"), plus the name, size and FNV-1a-64 checksum of
//                               both tensor files
// Every file is written to a temp file and fsynced before any is renamed (data::OutputFiles),
// the JSON last: a failed write leaves the checkpoint of that name as it was, and a crash
// between the renames leaves a JSON whose checksums do not match the tensor files. A
// torn pair, a truncated file or a missing file is rejected with a CheckpointError naming
// the file and the problem. Only the weights are needed to decode or average: a checkpoint
// whose optimizer file is missing can still be used for that.
//
// What a checkpoint needs besides its tensors — the dictionaries, the BPE codes — is copied
// into its folder (by the trainer when training starts, by `average` beside its output), so a
// save dir stays usable after the data it was trained on is moved or deleted. The metadata
// names such a file by a reference
//   {"file": its name relative to the checkpoint's folder, "path": the absolute path it was
//    copied from, "checksum": its file_checksum()};
// checkpoints written before these copies existed have only "path" and "checksum".
//
// Names as fairseq's save dir: checkpoint_last, checkpoint_best (lowest valid loss),
// checkpoint<E> at the end of epoch E, checkpoint_<E>_<U> every --save-interval-updates,
// checkpoint.best_<metric>_<score>_<U> with --keep-best-checkpoints.
// `--keep-last-epochs N` / `--keep-interval-updates N` keep only the newest N of each kind (N > 0;
// `--keep-interval-updates-pattern P` spares the multiples of P), `--keep-best-checkpoints N` the
// N of the best scores.
#pragma once
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/safetensors.hpp"

namespace attn::app {

struct CheckpointError : Error {
  using Error::Error;
};

struct CheckpointContent {
  NamedTensors model;        // fairseq state-dict names
  NamedTensors optimizer;    // empty: no optimizer file
  nlohmann::json metadata;   // the trainer's state (an object)
};

// The checkpoint name a user gives, without its extension: "dir/checkpoint3",
// "dir/checkpoint3.safetensors" and "dir/checkpoint3.json" all name "dir/checkpoint3".
std::string checkpoint_base(const std::string& path);
std::string weights_path(const std::string& base);
std::string optimizer_path(const std::string& base);
std::string metadata_path(const std::string& base);
bool checkpoint_exists(const std::string& base);

// "fnv1a64:<16 hex digits>" of a file's bytes.
std::string file_checksum(const std::string& path);

// Writes the three files (the optimizer file only when content.optimizer is not empty).
void save_checkpoint(const std::string& base, const CheckpointContent& content);
// The metadata of a checkpoint (any of its names, see checkpoint_base) after checking that
// its weights file, and its optimizer file when asked, are complete (sizes and checksums);
// throws CheckpointError.
nlohmann::json load_checkpoint_metadata(const std::string& path, bool with_optimizer = true);
// The whole checkpoint, verified; the optimizer state only when asked (and present).
CheckpointContent load_checkpoint(const std::string& path, bool with_optimizer = true);
// Copies a verified checkpoint under a new name (all staged, then renamed, the JSON last).
void copy_checkpoint(const std::string& from_base, const std::string& to_base);
void remove_checkpoint(const std::string& base);
// Refuses (CheckpointError naming the path and `command`) to write a weights-only checkpoint
// as `output` where that would lose a training run's state or the command's own input: over a
// checkpoint that has a NAME.optimizer.safetensors (writing it removes that file, which
// resuming needs), into the save dir of a training run that holds its lock now
// (apps/training/save_dir_lock.hpp), or over one of `inputs` under any name (a DataError, as
// data::refuse_output_over_input). An `output` that names no file ("", "DIR/") is refused too.
void check_weights_only_output(const std::string& output, const std::string& command,
                               const std::vector<std::string>& inputs);
// Averages the weights of checkpoints `bases` (docs/models.md §1.11, nn/checkpoint_average)
// into checkpoint `output`, with the first one's metadata (the files it references copied
// beside `output`) and no optimizer state. The inputs need only their weights. Checks
// `output` first (check_weights_only_output).
void average_checkpoints_into(const std::vector<std::string>& bases, const std::string& output);

// Copies `source` into `dir` as `name` (temp file + rename; an identical copy already there is
// kept, a different one is a CheckpointError) and returns its reference (see the top).
nlohmann::json keep_file_beside(const std::string& source, const std::string& dir, const std::string& name);
// The file a reference in the metadata of checkpoint `base` names: its "file" beside the
// checkpoint, else (older checkpoints, or a checkpoint copied without it) its "path"; the
// file must have the recorded checksum. Throws CheckpointError naming `what` and the paths.
std::string referenced_file(const nlohmann::json& reference, const std::string& base, const std::string& what);

struct CheckpointPolicy {
  int64_t save_interval_updates = 0;  // > 0: checkpoint_<E>_<U> every that many updates
  int64_t keep_last_epochs = -1;      // > 0: keep only the newest N checkpoint<E> (0, -1: all, as fairseq)
  int64_t keep_interval_updates = -1; // > 0: keep only the newest N checkpoint_<E>_<U> (0, -1: all)
  int64_t keep_interval_updates_pattern = -1;  // > 0: ... but for those with U a multiple of this, never removed
  bool save_epoch_checkpoints = true; // checkpoint<E> at the end of each epoch
  bool save_last = true;              // checkpoint_last at every save (--no-last-checkpoints: never)
  // > 0: also keep the N validated saves of the best scores as checkpoint.best_<metric>_<score>_<U>
  // (nn/checkpoint_names.hpp), `best_metric` being --best-checkpoint-metric.
  int64_t keep_best_checkpoints = 0;
  std::string best_metric = "loss";
  bool maximize_best_metric = false;  // higher is better (bleu)
};

// When to save and under which names (fairseq checkpoint_utils.save_checkpoint).
struct SaveRequest {
  int64_t epoch = 1;
  int64_t num_updates = 0;
  bool end_of_epoch = false;
  bool is_best = false;
  std::optional<double> score = std::nullopt;  // the --best-checkpoint-metric of these weights, when validated
};

// The names (bases in save_dir) a save request writes, first the one written in full.
std::vector<std::string> checkpoint_names(const std::string& save_dir, const SaveRequest& request,
                                          const CheckpointPolicy& policy);
// Writes the checkpoint under every name of checkpoint_names(), then removes the epoch and
// update checkpoints the policy no longer keeps; returns the names written.
std::vector<std::string> save_rotating(const std::string& save_dir, const SaveRequest& request,
                                       const CheckpointPolicy& policy, const CheckpointContent& content);

// Whether `name` (without folder and extension) is one attnlab's trainer writes:
// checkpoint_last, checkpoint_best, checkpoint<E>, checkpoint_<E>_<U>, checkpoint.best_<metric>_<score>_<U>.
bool is_checkpoint_name(const std::string& name);

// How far training had got when a checkpoint was saved, from its metadata (all -1 when it
// cannot be read). Of two saves at the same update count, the one further in the data (an
// epoch end) or done with validation is the later.
struct CheckpointProgress {
  int64_t num_updates = -1, epoch = -1, batch_index = -1;
  bool validated = false;
  auto operator<=>(const CheckpointProgress&) const = default;
};
CheckpointProgress checkpoint_progress(const std::string& base);

// The checkpoint bases of save_dir (trainer names with a NAME.json), newest first by
// checkpoint_progress(); at equal progress checkpoint_last first, checkpoint_best last. Resuming tries them in
// this order and takes the first one that loads completely.
std::vector<std::string> checkpoints_newest_first(const std::string& save_dir);

// Removes what interrupted saves left in save_dir — temp files of checkpoint names
// (NAME.safetensors.tmp.*, NAME.json.tmp.*), tensor files without their JSON, a JSON without
// its weights file — and returns the removed paths. Files not named as the trainer names
// checkpoints are never touched.
std::vector<std::string> remove_incomplete_saves(const std::string& save_dir);

// Finishes a save that was cut off after checkpoint `base` was written: copies `base` under
// each name of checkpoint_names(request) that does not already hold it intact, then removes
// what the policy no longer keeps. Returns the names written.
std::vector<std::string> finish_interrupted_save(const std::string& save_dir, const SaveRequest& request,
                                                 const CheckpointPolicy& policy, const std::string& base);

}  // namespace attn::app
