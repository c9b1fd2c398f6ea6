// CPU inverted dropout (Srivastava et al. 2014) and its fused forms (core/backend.hpp):
//   dropout      out = keep ? x / (1 - p) : 0
//   dropout_add  out = residual + (keep ? x / (1 - p) : 0)   (the Transformer's x + Dropout(f(x)))
//   backward     dx  = keep ? dy / (1 - p) : 0
// keep_i = (uniform_i >= p), uniform_i drawn from the Philox stream exactly as
// core/cpu/random.cpp draws it, so masks do not depend on the thread count and match CUDA.
//
// What is fused, and why: the mask, the scaling and (for dropout_add) the residual add are one
// pass over chunks of kChunk elements while the chunk's random words are still in L1; the
// unfused form wrote the mask, re-read it in a second pass and then added the residual in a
// third (a tensor written and read back each time). For float32 the keep test compares the
// 24-bit integer behind the uniform with ceil(p · 2^24) — the same decision as comparing the
// float uniform with p, without converting every word.
#include <cmath>
#include <type_traits>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/philox_stream.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {

namespace {

constexpr int64_t kChunk = 1024;  // elements per batch of random words

// keep[k] for stream elements [start, start + n), n <= kChunk.
template <typename T>
void keep_flags(uint64_t seed, uint64_t first, uint64_t start, int64_t n, double p, bool* keep) {
  uint32_t words[2 * kChunk];
  if constexpr (std::is_same_v<T, double>) {
    philox_words(seed, first, 2 * start, 2 * n, words);
    for (int64_t k = 0; k < n; ++k) keep[k] = uniform_double_from_words(words[2 * k], words[2 * k + 1]) >= p;
  } else {
    // uniform = (word >> 8) / 2^24 >= p  <=>  (word >> 8) >= ceil(p · 2^24) (p · 2^24 is exact).
    const uint32_t threshold = uint32_t(std::ceil(p * 16777216.0));
    philox_words(seed, first, start, n, words);
    for (int64_t k = 0; k < n; ++k) keep[k] = (words[k] >> 8) >= threshold;
  }
}

// Calls chunk(lo, n, keep) over [0, numel) in parallel, keep holding the flags of [lo, lo + n).
template <typename T, typename ChunkFn>
void for_each_keep_chunk(int64_t numel, double p, uint64_t seed, uint64_t first, ChunkFn&& chunk) {
  const int64_t chunks = (numel + kChunk - 1) / kChunk;
  parallel_ranges(chunks, [&](int64_t c_lo, int64_t c_hi) {
    bool keep[kChunk];
    for (int64_t c = c_lo; c < c_hi; ++c) {
      const int64_t lo = c * kChunk, n = std::min(kChunk, numel - lo);
      keep_flags<T>(seed, first, uint64_t(lo), n, p, keep);
      chunk(lo, n, keep);
    }
  }, 16);
}

// out = (residual +) keep ? x · scale : 0, writing the mask; `residual` may be null.
template <typename T>
void dropout_typed(const Tensor& x, const T* residual, double p, uint64_t seed, uint64_t first, const Tensor& out,
                   const Tensor& mask) {
  const Tensor xc = x.contiguous();  // a no-op for the activations dropout sees in practice
  const T* xp = xc.data<T>();
  T* op = out.data<T>();
  bool* mp = mask.data<bool>();
  const T scale = T(1.0 / (1.0 - p));
  for_each_keep_chunk<T>(x.numel(), p, seed, first, [&](int64_t lo, int64_t n, const bool* keep) {
    const T* xs = xp + lo;
    T* os = op + lo;
    bool* ms = mp + lo;
    for (int64_t k = 0; k < n; ++k) os[k] = keep[k] ? xs[k] * scale : T(0);
    // A second loop over the chunk (still in L1) rather than rs[k] + x·scale in one
    // expression, which the compiler would contract into an FMA: this way the sum is
    // rounded exactly as residual + dropout(x) is.
    if (residual != nullptr)
      for (int64_t k = 0; k < n; ++k) os[k] = residual[lo + k] + os[k];
    for (int64_t k = 0; k < n; ++k) ms[k] = keep[k];
  });
}

}  // namespace

void CpuBackend::dropout(const Tensor& x, double p, uint64_t seed, uint64_t first, const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    dropout_typed<T>(x, nullptr, p, seed, first, out, mask);
  });
}

void CpuBackend::dropout_add(const Tensor& x, const Tensor& residual, double p, uint64_t seed, uint64_t first,
                             const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Tensor rc = residual.contiguous();
    dropout_typed<T>(x, rc.data<T>(), p, seed, first, out, mask);
  });
}

void CpuBackend::dropout_backward(const Tensor& dy, const Tensor& mask, double scale, const Tensor& dx) {
  dispatch_floating(dx.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T s = T(scale);
    map_elements<T, T, bool>([s](T g, bool keep) { return keep ? g * s : T(0); }, dx, {&dy, &mask});
  });
}

}  // namespace attn::cpu
