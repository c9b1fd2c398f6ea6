// Element-wise float32 kernels over contiguous tensors (the unary ops of core/backend.hpp),
// in the cuda/kernels/device.hpp dialect. Grid-stride loops: any grid covers any size.
#pragma once
#include "core/kernel_params.hpp"
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

// f(x) for the unary op `op` with its scalars (core/kernel_params.hpp), in float32.
__device__ inline float apply_unary(UnaryOp op, float x, float a, float b) {
  switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return fabsf(x);
    case UnaryOp::Exp: return expf(x);
    case UnaryOp::Log: return logf(x);
    case UnaryOp::Sqrt: return sqrtf(x);
    case UnaryOp::Rsqrt: return 1.0f / sqrtf(x);
    case UnaryOp::Relu: return x > 0.0f ? x : 0.0f;
    case UnaryOp::Elu: return x > 0.0f ? x : a * expm1f(x);
    case UnaryOp::Gelu: return 0.5f * x * erfcf(-x * 0.70710678118654752f);
    case UnaryOp::Sigmoid: return 1.0f / (1.0f + expf(-x));
    case UnaryOp::Tanh: return tanhf(x);
    case UnaryOp::Sin: return sinf(x);
    case UnaryOp::Cos: return cosf(x);
    case UnaryOp::Pow: return powf(x, a);
    case UnaryOp::Clamp: return x < a ? a : (x > b ? b : x);
    case UnaryOp::Reciprocal: return 1.0f / x;
    case UnaryOp::Square: return x * x;
    case UnaryOp::AddScalar: return x + a;
    case UnaryOp::MulScalar: return x * a;
    case UnaryOp::RSubScalar: return a - x;
    case UnaryOp::RDivScalar: return a / x;
  }
  return x;
}

// y[i] = f(x[i]) for i < n (y may be x).
__global__ void unary_kernel(UnaryOp op, float a, float b, const float* x, float* y, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = apply_unary(op, x[i], a, b);
}

// y[i] = value for i < n.
__global__ void fill_kernel(float value, float* y, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = value;
}

}  // namespace attn::cuda_kernels
