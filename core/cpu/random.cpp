// CPU random kernels on the Philox stream (core/rng.hpp): element i depends only on
// (seed, first, i), so any split of the work over threads gives the same tensor, and the
// CUDA kernels computing the same functions give it too.
#include <cmath>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {

namespace {

// Uniform in [0, 1) for element i: 24 random bits for float32, 53 for float64.
template <typename T>
double unit_uniform(uint64_t seed, uint64_t first, uint64_t i) {
  if constexpr (std::is_same_v<T, double>) return philox_uniform_double(seed, first, i);
  else return philox_uniform_float(seed, first, i);
}

// Standard normal for element i by Box–Muller: elements 2j and 2j+1 are the cosine and
// sine halves of one pair drawn from uniforms 2j and 2j+1.
template <typename T>
double standard_normal(uint64_t seed, uint64_t first, uint64_t i) {
  const uint64_t pair = i & ~uint64_t(1);
  const double u1 = 1.0 - unit_uniform<T>(seed, first, pair);  // in (0, 1]: log is finite
  const double u2 = unit_uniform<T>(seed, first, pair + 1);
  const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * M_PI * u2;
  return radius * ((i & 1) ? std::sin(angle) : std::cos(angle));
}

// out[i] = value(i) over contiguous out, in parallel.
template <typename T, typename ValueFn>
void generate(const Tensor& out, ValueFn&& value) {
  T* o = out.data<T>();
  parallel_ranges(out.numel(), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) o[i] = static_cast<T>(value(uint64_t(i)));
  }, kParallelGrain / 16);
}

}  // namespace

void CpuBackend::uniform(const Tensor& out, double low, double high, uint64_t seed, uint64_t first) {
  dispatch_floating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    generate<T>(out, [&](uint64_t i) { return low + (high - low) * unit_uniform<T>(seed, first, i); });
  });
}

void CpuBackend::normal(const Tensor& out, double mean, double stddev, uint64_t seed, uint64_t first) {
  dispatch_floating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    generate<T>(out, [&](uint64_t i) { return mean + stddev * standard_normal<T>(seed, first, i); });
  });
}

void CpuBackend::dropout(const Tensor& x, double p, uint64_t seed, uint64_t first, const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    generate<bool>(mask, [&](uint64_t i) { return unit_uniform<T>(seed, first, i) >= p; });
    const T scale = T(1.0 / (1.0 - p));
    map_elements<T, T, bool>([scale](T v, bool keep) { return keep ? v * scale : T(0); }, out, {&x, &mask});
  });
}

}  // namespace attn::cpu
