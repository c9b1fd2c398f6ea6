// Element-wise kernels over contiguous tensors (fill, the unary ops and their backward, the
// fused bias + ReLU of core/backend.hpp; float32, and integers for the unary ops they take), in the cuda/kernels/device.hpp
// dialect. Grid-stride loops: any grid covers any size.
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

// Whether integer tensors take op (the ops core/cpu/elementwise.cpp defines for them).
__host__ __device__ inline bool is_integer_unary(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Relu:
    case UnaryOp::Square:
    case UnaryOp::Clamp:
    case UnaryOp::AddScalar:
    case UnaryOp::MulScalar:
    case UnaryOp::RSubScalar: return true;
    default: return false;
  }
}

// f(x) for an integer op (is_integer_unary), its scalars already converted to T as the CPU does.
template <typename T>
__device__ inline T apply_integer_unary(UnaryOp op, T x, T a, T b) {
  switch (op) {
    case UnaryOp::Neg: return T(-x);
    case UnaryOp::Abs: return x < T(0) ? T(-x) : x;
    case UnaryOp::Relu: return x > T(0) ? x : T(0);
    case UnaryOp::Square: return T(x * x);
    case UnaryOp::Clamp: return x < a ? a : (x > b ? b : x);
    case UnaryOp::AddScalar: return T(x + a);
    case UnaryOp::MulScalar: return T(x * a);
    case UnaryOp::RSubScalar: return T(a - x);
    default: return x;
  }
}

// y[i] = f(x[i]) for i < n over integers (y may be x): the positions and lengths the engine
// keeps on the device.
template <typename T>
__global__ void integer_unary_kernel(UnaryOp op, T a, T b, const T* x, T* y, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = apply_integer_unary(op, x[i], a, b);
}

// dL/dx of y = op(x) from g = dL/dy, x and y (the formulas of core/cpu/elementwise.cpp).
__device__ inline float unary_derivative(UnaryOp op, float x, float y, float g, float a, float b) {
  switch (op) {
    case UnaryOp::Neg: return -g;
    case UnaryOp::Abs: return x > 0.0f ? g : (x < 0.0f ? -g : 0.0f);
    case UnaryOp::Exp: return g * y;
    case UnaryOp::Log: return g / x;
    case UnaryOp::Sqrt: return g * 0.5f / y;
    case UnaryOp::Rsqrt: return g * -0.5f * y * y * y;
    case UnaryOp::Relu: return x > 0.0f ? g : 0.0f;
    case UnaryOp::Elu: return x > 0.0f ? g : g * (y + a);
    case UnaryOp::Gelu: {
      const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
      const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
      return g * (cdf + x * pdf);
    }
    case UnaryOp::Sigmoid: return g * y * (1.0f - y);
    case UnaryOp::Tanh: return g * (1.0f - y * y);
    case UnaryOp::Sin: return g * cosf(x);
    case UnaryOp::Cos: return -g * sinf(x);
    case UnaryOp::Pow: return g * a * powf(x, a - 1.0f);
    case UnaryOp::Clamp: return x >= a && x <= b ? g : 0.0f;
    case UnaryOp::Reciprocal: return -g * y * y;
    case UnaryOp::Square: return 2.0f * x * g;
    case UnaryOp::AddScalar: return g;
    case UnaryOp::MulScalar: return g * a;
    case UnaryOp::RSubScalar: return -g;
    case UnaryOp::RDivScalar: return -g * y / x;
  }
  return g;
}

// dx[i] = dL/dx from dy, x and y (y may be null for the ops that do not read it).
__global__ void unary_backward_kernel(UnaryOp op, float a, float b, const float* x, const float* y, const float* dy,
                                      float* dx, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = unary_derivative(op, x[i], y ? y[i] : 0.0f, dy[i], a, b);
}

// In place over y [rows, cols]: y = relu(y + bias[c]) (bias may be null: y = relu(y)).
__global__ void bias_relu_kernel(float* y, const float* bias, int cols, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float z = bias ? y[i] + bias[i % cols] : y[i];
    y[i] = z > 0.0f ? z : 0.0f;
  }
}

// dz = y > 0 ? dy : 0 over [rows, cols].
__global__ void relu_mask_backward_kernel(const float* y, const float* dy, float* dz, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dz[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

// y[i] = value for i < n; Word is the element's bits (fill works for every dtype).
template <typename Word>
__global__ void fill_kernel(Word value, Word* y, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = value;
}

}  // namespace attn::cuda_kernels
