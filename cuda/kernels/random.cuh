// Random float32 tensors on the Philox stream (core/backend.hpp's uniform and normal), in the
// cuda/kernels/device.hpp dialect: element i depends only on (seed, first, i) and is drawn
// with the CPU's functions (core/rng.hpp, core/cpu/random.cpp), so both devices fill a
// tensor with the same numbers (uniform: bit for bit; normal: up to the last bits of the
// device's log, sqrt and cos).
#pragma once
#include "core/rng.hpp"
#include "cuda/kernels/device.hpp"

namespace attn::cuda_kernels {

// out[i] = low + (high − low) · u_i in double, rounded to float; the product is never fused
// with the add (__dmul_rn), as the CPU rounds it.
__global__ void uniform_kernel(float* out, double low, double high, unsigned long long seed,
                               unsigned long long first, long long n) {
  const long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = float(low + __dmul_rn(high - low, double(philox_uniform_float(seed, first, (unsigned long long)i))));
}

// Box–Muller on the pairs of uniforms (2j, 2j + 1): out[2j] = mean + stddev · r cos θ and
// out[2j + 1] = mean + stddev · r sin θ, r = √(−2 ln(1 − u_2j)), θ = 2π u_2j+1.
__global__ void normal_kernel(float* out, double mean, double stddev, unsigned long long seed,
                              unsigned long long first, long long n) {
  const long long pairs = (n + 1) / 2, stride = (long long)blockDim.x * gridDim.x;
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < pairs; j += stride) {
    const double u0 = philox_uniform_float(seed, first, (unsigned long long)(2 * j));
    const double u1 = philox_uniform_float(seed, first, (unsigned long long)(2 * j + 1));
    const double radius = sqrt(-2.0 * log(1.0 - u0)), angle = 2.0 * 3.14159265358979323846 * u1;
    out[2 * j] = float(mean + stddev * radius * cos(angle));
    if (2 * j + 1 < n) out[2 * j + 1] = float(mean + stddev * radius * sin(angle));
  }
}

}  // namespace attn::cuda_kernels
