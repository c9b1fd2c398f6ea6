// Binary element-wise kernels with broadcasting (core/backend.hpp's binary and
// where), in the cuda/kernels/device.hpp dialect. The output is contiguous; each operand is
// any strided view of the output's shape (stride 0 along broadcast dims), described by a
// StridedLayout.
#pragma once
#include "core/kernel_params.hpp"
#include "cuda/kernels/device.hpp"
#include "cuda/kernels/strided_offsets.cuh"

namespace attn::cuda_kernels {

// Whether v is NaN (integers never are).
template <typename T>
__device__ inline bool is_nan(T) {
  return false;
}
__device__ inline bool is_nan(float v) { return v != v; }

// a op b for an arithmetic op, as the CPU computes it (NaN propagates through max/min from a).
// T is float, or an integer type for the positions and lengths the engine keeps on the device
// (bool: the overload below).
template <typename T>
__device__ inline T apply_arithmetic(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Maximum: return is_nan(a) ? a : (a > b ? a : b);
    case BinaryOp::Minimum: return is_nan(a) ? a : (a < b ? a : b);
    default: return T(0);
  }
}

// Bool operands (masks) take only maximum (or) and minimum (and) besides the comparisons, as
// on the CPU (core/ops_elementwise.cpp refuses the rest before any kernel runs).
__device__ inline bool apply_arithmetic(BinaryOp op, bool a, bool b) {
  return op == BinaryOp::Maximum ? (a || b) : op == BinaryOp::Minimum ? (a && b) : false;
}

template <typename T>
__device__ inline bool apply_comparison(BinaryOp op, T a, T b) {
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

template <typename T>
__device__ inline T binary_result(BinaryOp op, T a, T b, T*) {
  return apply_arithmetic(op, a, b);
}
template <typename T>
__device__ inline bool binary_result(BinaryOp op, T a, T b, bool*) {
  return apply_comparison(op, a, b);
}
// Bool operands give bool for both kinds of op.
__device__ inline bool binary_result(BinaryOp op, bool a, bool b, bool*) {
  return op >= BinaryOp::Eq ? apply_comparison(op, a, b) : apply_arithmetic(op, a, b);  // is_comparison(op)
}

// out[i] = a[i] op b[i] over n = Π sizes elements of type T; Out is T (arithmetic) or bool
// (comparisons).
template <typename T, typename Out>
__global__ void binary_kernel(BinaryOp op, const T* a, const T* b, Out* out, StridedLayout layout, long long n) {
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
