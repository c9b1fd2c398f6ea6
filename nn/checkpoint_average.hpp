// Checkpoint averaging as fairseq's scripts/average_checkpoints.py does it
// (docs/models.md §1.11): every tensor is the arithmetic mean θ̄ = (1/N)·Σθ_i over the N
// files (summed in float64, then rounded to the tensor's dtype); integer and BOOL tensors
// are floor-divided, ⌊Σθ_i / N⌋; the metadata is copied from the first file. All files
// must hold the same names with the same dtypes and shapes, and finite floating values (a
// NaN or infinite weight, of a diverged run, is an error naming the tensor and the file).
//
// Fixed random draws (RFA's `random_matrices`, docs/models.md §5.2) are not averaged: a mean of
// random features is not a random feature. They must be the same in every file (one run) and
// are copied.
//
// last_checkpoints() picks the files as fairseq's --num-epoch-checkpoints /
// --num-update-checkpoints do: the N with the highest epoch number in
// `checkpoint<epoch><ext>`, or the highest update number in `checkpoint_<epoch>_<update><ext>`,
// newest first (names: nn/checkpoint_names.hpp).
#pragma once
#include <string>
#include <vector>

#include "core/safetensors.hpp"
#include "nn/checkpoint_names.hpp"

namespace attn::nn {

// The averaged tensors (in the first file's order) and the first file's metadata.
// `path` of the result is empty.
SafetensorsFile average_checkpoints(const std::vector<std::string>& inputs);
// Averages `inputs` and writes the result atomically to `output`.
void average_checkpoints(const std::vector<std::string>& inputs, const std::string& output);

// Throws attn::Error when the folder holds fewer than n matching files.
std::vector<std::string> last_checkpoints(const std::string& dir, int n, CheckpointNumbering numbering,
                                          const std::string& extension = ".safetensors");

}  // namespace attn::nn
