// A group of tensors handled by one launch of the training-step kernels
// (cuda/kernels/parameter_update.cuh): up to kGroupTensors tensors, each cut into blocks of
// kGroupBlockElements elements, one CUDA block per such block across all of them. Plain
// structs passed by value to the kernels (well under the 4 KiB of kernel parameters), free of
// the kernel dialect so host code can fill them (cuda/cuda_backend.cpp).
#pragma once
#include "core/optimizer_params.hpp"
#include "cuda/kernels/host_device.hpp"

namespace attn::cuda_kernels {

constexpr int kGroupTensors = 32;
constexpr long long kGroupBlockElements = 4096;

// The tensors' sizes and, for each, the first block that works on it.
struct GroupBlocks {
  int count = 0;
  long long numel[kGroupTensors] = {};
  int first_block[kGroupTensors + 1] = {};

  // The blocks a tensor of n elements takes.
  static int blocks_of(long long n) { return int((n + kGroupBlockElements - 1) / kGroupBlockElements); }
  bool full() const { return count == kGroupTensors; }
  int blocks() const { return first_block[count]; }
  // Appends a tensor of n elements (the group must not be full).
  void add(long long n) {
    numel[count] = n;
    first_block[count + 1] = first_block[count] + blocks_of(n);
    ++count;
  }
  // The tensor that block `block` works on (tensors of no element have no block).
  ATTN_HD int tensor_of(int block) const {
    int t = 0;
    while (t + 1 < count && first_block[t + 1] <= block) ++t;
    return t;
  }
};

struct AdamGroup {
  GroupBlocks blocks;
  float* param[kGroupTensors];
  const float* grad[kGroupTensors];
  float* exp_avg[kGroupTensors];
  float* exp_avg_sq[kGroupTensors];
  AdamUpdate update[kGroupTensors];
};

struct NagGroup {
  GroupBlocks blocks;
  float* param[kGroupTensors];
  const float* grad[kGroupTensors];
  float* buffer[kGroupTensors];
  NagUpdate update[kGroupTensors];
};

struct AverageGroup {
  GroupBlocks blocks;
  float* average[kGroupTensors];
  const float* value[kGroupTensors];
};

// Tensors read (sum of squares) or scaled in place.
struct FloatGroup {
  GroupBlocks blocks;
  float* x[kGroupTensors];
};

}  // namespace attn::cuda_kernels
