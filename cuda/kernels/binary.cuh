// Binary element-wise float32 kernels with broadcasting (core/backend.hpp's binary and
// where), in the cuda/kernels/device.hpp dialect. The output is contiguous; each operand is
// any strided view of the output's shape (stride 0 along broadcast dims), described by a
// StridedLayout.
#pragma once
#include "core/kernel_params.hpp"
#include "cuda/kernels/device.hpp"
#include "cuda/kernels/strided_offsets.cuh"

namespace attn::cuda_kernels {

// a op b for an arithmetic op, as the CPU computes it (NaN propagates through max/min from a).
__device__ inline float apply_arithmetic(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Maximum: return a != a ? a : (a > b ? a : b);
    case BinaryOp::Minimum: return a != a ? a : (a < b ? a : b);
    default: return 0.0f;
  }
}

__device__ inline bool apply_comparison(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    default: return false;
  }
}

__device__ inline float binary_result(BinaryOp op, float a, float b, float*) { return apply_arithmetic(op, a, b); }
__device__ inline bool binary_result(BinaryOp op, float a, float b, bool*) { return apply_comparison(op, a, b); }

// out[i] = a[i] op b[i] over n = Π sizes elements; Out is float (arithmetic) or bool (comparisons).
template <typename Out>
__global__ void binary_kernel(BinaryOp op, const float* a, const float* b, Out* out, StridedLayout layout,
                              long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    long long a_offset = 0, b_offset = 0;
    operand_offsets(layout, i, a_offset, b_offset);
    out[i] = binary_result(op, a[a_offset], b[b_offset], out);
  }
}

// out[i] = cond[i] ? a[i] : b[i] (cond: the layout's third operand).
__global__ void where_kernel(const bool* cond, const float* a, const float* b, float* out, StridedLayout layout,
                             long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    long long a_offset = 0, b_offset = 0;
    operand_offsets(layout, i, a_offset, b_offset);
    out[i] = cond[third_operand_offset(layout, i)] ? a[a_offset] : b[b_offset];
  }
}

}  // namespace attn::cuda_kernels
