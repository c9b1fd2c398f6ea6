// CPU random kernels on the Philox stream (core/rng.hpp): element i depends only on
// (seed, first, i), so any split of the work over threads gives the same tensor, and the
// CUDA kernels computing the same functions give it too. Work goes in chunks that draw
// whole Philox blocks (4 words each, core/cpu/philox_stream.hpp) instead of one block per
// word. Dropout, which draws from the same stream, is in core/cpu/dropout.cpp.
#include <cmath>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/philox_stream.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {

namespace {

constexpr int64_t kChunk = 1024;  // elements per batch of uniforms

// u[k] = the uniform [0, 1) of stream element start + k, k < n <= kChunk; equal to
// philox_uniform_float / philox_uniform_double of that element.
template <typename T>
void unit_uniforms(uint64_t seed, uint64_t first, uint64_t start, int64_t n, double* u) {
  uint32_t words[2 * kChunk];
  if constexpr (std::is_same_v<T, double>) {
    philox_words(seed, first, 2 * start, 2 * n, words);
    for (int64_t k = 0; k < n; ++k) u[k] = uniform_double_from_words(words[2 * k], words[2 * k + 1]);
  } else {
    philox_words(seed, first, start, n, words);
    for (int64_t k = 0; k < n; ++k) u[k] = uniform_float_from_word(words[k]);
  }
}

// Calls chunk(lo, n, u) over [0, numel) in parallel, u holding the uniforms of elements
// [lo, lo + n); chunks start at even elements so Box–Muller pairs never straddle two.
template <typename T, typename ChunkFn>
void for_each_uniform_chunk(int64_t numel, uint64_t seed, uint64_t first, ChunkFn&& chunk) {
  const int64_t chunks = (numel + kChunk - 1) / kChunk;
  parallel_ranges(chunks, [&](int64_t c_lo, int64_t c_hi) {
    double u[kChunk];
    for (int64_t c = c_lo; c < c_hi; ++c) {
      const int64_t lo = c * kChunk, n = std::min(kChunk, numel - lo);
      unit_uniforms<T>(seed, first, uint64_t(lo), n + (n & 1), u);  // an odd tail still draws its pair
      chunk(lo, n, u);
    }
  }, 16);
}

}  // namespace

void CpuBackend::uniform(const Tensor& out, double low, double high, uint64_t seed, uint64_t first) {
  dispatch_floating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    for_each_uniform_chunk<T>(out.numel(), seed, first, [&](int64_t lo, int64_t n, const double* u) {
      for (int64_t k = 0; k < n; ++k) o[lo + k] = static_cast<T>(low + (high - low) * u[k]);
    });
  });
}

// Box–Muller: elements 2j and 2j+1 are r cos θ and r sin θ of the pair drawn from
// uniforms 2j and 2j+1, with r = sqrt(-2 ln(1 - u_2j)) (1 - u lies in (0, 1]) and θ = 2π u_2j+1.
void CpuBackend::normal(const Tensor& out, double mean, double stddev, uint64_t seed, uint64_t first) {
  dispatch_floating(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    for_each_uniform_chunk<T>(out.numel(), seed, first, [&](int64_t lo, int64_t n, const double* u) {
      for (int64_t k = 0; k < n; k += 2) {
        const double radius = std::sqrt(-2.0 * std::log(1.0 - u[k])), angle = 2.0 * M_PI * u[k + 1];
        o[lo + k] = static_cast<T>(mean + stddev * radius * std::cos(angle));
        if (k + 1 < n) o[lo + k + 1] = static_cast<T>(mean + stddev * radius * std::sin(angle));
      }
    });
  });
}

}  // namespace attn::cpu
