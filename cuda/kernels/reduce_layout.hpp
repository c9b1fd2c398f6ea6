// Where the inputs of a general reduction are (cuda/kernels/reduce.cuh): the output's kept
// dims with the input's strides along them, and the reduced dims with theirs. A plain struct
// passed by value to the kernel, filled by host code (cuda/cuda_backend.cpp).
#pragma once

namespace attn::cuda_kernels {

constexpr int kMaxReduceDims = 8;

struct ReduceLayout {
  int kept_dims;
  long long kept_sizes[kMaxReduceDims];
  long long kept_strides[kMaxReduceDims];
  int reduced_dims;
  long long reduced_sizes[kMaxReduceDims];
  long long reduced_strides[kMaxReduceDims];
  long long reduced_count;  // Π reduced_sizes
};

}  // namespace attn::cuda_kernels
