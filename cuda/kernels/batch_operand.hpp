// Where the matrices of one operand of a batch of products over two batch dims start
// (cuda/kernels/gemm_pointers.cuh): a plain struct passed by value to the kernel, free of the
// kernel dialect so host code can fill it (cuda/cuda_backend.cpp).
#pragma once
#include "cuda/kernels/host_device.hpp"

namespace attn::cuda_kernels {

// Matrix (i, j) starts at data + i · outer_stride + j · inner_stride (a stride may be 0: the
// operand is broadcast over that batch dim).
struct BatchOperand {
  const float* data;
  long long outer_stride, inner_stride;
  ATTN_HD const float* at(long long i, long long j) const { return data + i * outer_stride + j * inner_stride; }
};

}  // namespace attn::cuda_kernels
