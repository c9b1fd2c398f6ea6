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
// float uniform with p, without converting every word (nor going through a bool array,
// which measured 1.5x slower per chunk).
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/philox_stream.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {

namespace {

constexpr int64_t kChunk = 1024;  // elements per batch of random words

// keep ? value : +0, as an AND of value's bits with all ones or all zeros. GCC (12) leaves the
// plain select of a float on a condition of another type (a mask byte, a random word) as a
// branch per element ("control flow in loop"); this form it vectorizes. The same values.
template <typename T>
T kept_or_zero(T value, bool keep) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float32 or float64");
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  return std::bit_cast<T>(std::bit_cast<Bits>(value) & (Bits(0) - Bits(keep)));
}

// The keep decision of element k of a chunk from the chunk's random words: uniform >= p.
template <typename T>
class KeepTest {
 public:
  static constexpr int64_t kWordsPerElement = std::is_same_v<T, double> ? 2 : 1;

  // float32: uniform = (word >> 8) / 2^24 >= p  <=>  (word >> 8) >= ceil(p · 2^24) (exact).
  explicit KeepTest(double p) : p_(p), threshold_(float_keep_threshold(p)) {}

  bool operator()(const uint32_t* words, int64_t k) const {
    if constexpr (kWordsPerElement == 2) return uniform_double_from_words(words[2 * k], words[2 * k + 1]) >= p_;
    else return (words[k] >> 8) >= threshold_;
  }

 private:
  double p_;
  uint32_t threshold_;
};

// out = (residual +) keep ? x · scale : 0, writing the mask; `residual` may be null.
// Chunks of kChunk elements are spread over the threads; each draws its own random words.
template <typename T>
void dropout_typed(const Tensor& x, const T* residual, double p, uint64_t seed, uint64_t first, const Tensor& out,
                   const Tensor& mask) {
  const Tensor xc = x.contiguous();  // a no-op for the activations dropout sees in practice
  const T* xp = xc.data<T>();
  T* op = out.data<T>();
  bool* mp = mask.data<bool>();
  const T scale = T(1.0 / (1.0 - p));
  const KeepTest<T> keep(p);
  constexpr int64_t kWords = KeepTest<T>::kWordsPerElement;
  const int64_t numel = x.numel(), chunks = (numel + kChunk - 1) / kChunk;
  // Scalars are captured by value: a by-reference T could alias the T stores and would stop
  // the loops from vectorizing.
  parallel_ranges(chunks, [&, scale, keep](int64_t c_lo, int64_t c_hi) {
    uint32_t words[kWords * kChunk];
    for (int64_t c = c_lo; c < c_hi; ++c) {
      const int64_t lo = c * kChunk, n = std::min(kChunk, numel - lo);
      philox_words(seed, first, uint64_t(kWords * lo), kWords * n, words);
      const T* xs = xp + lo;
      T* os = op + lo;
      for (int64_t k = 0; k < n; ++k) os[k] = kept_or_zero(xs[k] * scale, keep(words, k));
      // A second loop over the chunk (still in L1) rather than rs[k] + x·scale in one
      // expression, which the compiler would contract into an FMA: this way the sum is
      // rounded exactly as residual + dropout(x) is.
      if (residual != nullptr)
        for (int64_t k = 0; k < n; ++k) os[k] = residual[lo + k] + os[k];
      for (int64_t k = 0; k < n; ++k) mp[lo + k] = keep(words, k);
    }
  }, 16);
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
    if (!dy.is_contiguous() || !mask.is_contiguous()) {
      map_elements<T, T, bool>([s](T g, bool keep) { return kept_or_zero(g * s, keep); }, dx, {&dy, &mask});
      return;
    }
    // The mask read as bytes: GCC vectorizes `byte != 0` about 3x better than a bool load.
    const uint8_t* m = reinterpret_cast<const uint8_t*>(mask.data<bool>());
    const T* g = dy.data<T>();
    T* d = dx.data<T>();
    parallel_ranges(dx.numel(), [m, g, d, s](int64_t lo, int64_t hi) {  // by value: see dropout_typed
      for (int64_t i = lo; i < hi; ++i) d[i] = kept_or_zero(g[i] * s, m[i] != 0);
    });
  });
}

}  // namespace attn::cpu
