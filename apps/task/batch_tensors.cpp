// data::Batch -> tensors (docs/models.md §1.1). See batch_tensors.hpp.
#include "apps/task/batch_tensors.hpp"

namespace attn::app {
namespace {

Tensor int64_matrix(const std::vector<int64_t>& values, int64_t rows, int64_t cols, const char* what, Device device) {
  ATTN_CHECK(int64_t(values.size()) == rows * cols, "batch: {} holds {} values but the batch is {} x {}", what,
             values.size(), rows, cols);
  return from_vector<int64_t>(values, {rows, cols}, device);
}

}  // namespace

BatchTensors to_tensors(const data::Batch& batch, Device device) {
  BatchTensors tensors;
  tensors.src_tokens = int64_matrix(batch.source_tokens, batch.batch_size, batch.source_len, "source_tokens", device);
  if (!batch.target.empty()) {
    tensors.target = int64_matrix(batch.target, batch.batch_size, batch.target_len, "target", device);
    tensors.prev_output_tokens =
        int64_matrix(batch.prev_output_tokens, batch.batch_size, batch.target_len, "prev_output_tokens", device);
  }
  tensors.num_target_tokens = batch.num_target_tokens;
  return tensors;
}

}  // namespace attn::app
