// The error for a target class outside the logits, one message for every backend's
// label-smoothed cross entropy (the CPU checks each row; the CUDA kernel reports the first bad one).
#pragma once
#include <cstdint>

#include "core/error.hpp"

namespace attn {

inline Error cross_entropy_target_error(int64_t target, int64_t position, int64_t classes, int64_t ignore_index) {
  return Error(fmt::format("label_smoothed_cross_entropy: target {} at position {} is out of range [0, {}) (ignore_index {})",
                           target, position, classes, ignore_index));
}

}  // namespace attn
