// Turning data/'s batches (plain row-major int64 arrays, data/batching.hpp) into the int64
// tensors the model takes (docs/models.md §1.1): src_tokens [B, S] left-padded,
// prev_output_tokens and target [B, T] right-padded. This is the one place where data/ and
// the tensor engine meet (docs/design.md §6).
#pragma once
#include <cstdint>

#include "core/tensor.hpp"
#include "data/batching.hpp"

namespace attn::app {

struct BatchTensors {
  Tensor src_tokens;          // int64 [B, S]
  Tensor prev_output_tokens;  // int64 [B, T]; undefined for inference batches
  Tensor target;              // int64 [B, T]; undefined for inference batches
  int64_t num_target_tokens = 0;
};

// Checks that the arrays match the batch's dimensions (attn::Error otherwise); the tensors
// are made on `device` (the model's).
BatchTensors to_tensors(const data::Batch& batch, Device device);

}  // namespace attn::app
