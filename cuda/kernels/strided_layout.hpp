// Where the elements of up to three strided operands of one shape are (the binary kernels,
// cuda/kernels/binary.cuh, strided copies, cuda/kernels/strided_copy.cuh, and where): a plain
// struct passed by value to a kernel, free of the kernel dialect so host code can fill it
// (cuda/strided_layout.hpp).
#pragma once

namespace attn::cuda_kernels {

constexpr int kMaxLayoutDims = 8;

// The output's sizes and each operand's strides (in elements), innermost dim last.
struct StridedLayout {
  int dims;
  long long sizes[kMaxLayoutDims];
  long long a_strides[kMaxLayoutDims];
  long long b_strides[kMaxLayoutDims];
  long long c_strides[kMaxLayoutDims];  // a third operand's (where: the condition), else 0
};

}  // namespace attn::cuda_kernels
