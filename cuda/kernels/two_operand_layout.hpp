// Where the elements of two strided operands are (the binary kernels, cuda/kernels/binary.cuh,
// and strided copies, cuda/kernels/strided_copy.cuh): a plain struct passed by value to a
// kernel, free of the kernel dialect so host code can fill it (cuda/two_operand_layout.hpp).
#pragma once

namespace attn::cuda_kernels {

constexpr int kMaxLayoutDims = 8;

// The output's sizes and each operand's strides (in elements), innermost dim last.
struct TwoOperandLayout {
  int dims;
  long long sizes[kMaxLayoutDims];
  long long a_strides[kMaxLayoutDims];
  long long b_strides[kMaxLayoutDims];
};

}  // namespace attn::cuda_kernels
