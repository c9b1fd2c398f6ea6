// Inline Philox-4x32-10 (included by core/rng.hpp; usable from host and device code).
#pragma once
#include <cmath>

namespace attn {

namespace philox {
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
constexpr int kRounds = 10;

// One round on counter words (c0, c1, c2, c3) with round key (k0, k1).
ATTN_HD inline void apply_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0, uint32_t k1) {
  uint64_t p0 = uint64_t(kM0) * c0, p1 = uint64_t(kM1) * c2;
  uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
  c1 = uint32_t(p1);
  c3 = uint32_t(p0);
  c0 = n0;
  c2 = n2;
}
}  // namespace philox

// One Philox-4x32-10 block in place: the counter words (c0, c1, c2, c3) on entry, the random
// words on return. Plain scalars, so that CUDA kernels (cuda/kernels/) draw the same streams.
ATTN_HD inline void philox_block(uint64_t key, uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3) {
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  for (int r = 0; r < philox::kRounds; ++r, k0 += philox::kW0, k1 += philox::kW1) philox::apply_round(c0, c1, c2, c3, k0, k1);
}

ATTN_HD inline std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter_hi, uint64_t counter_lo) {
  uint32_t c0 = uint32_t(counter_lo), c1 = uint32_t(counter_lo >> 32);
  uint32_t c2 = uint32_t(counter_hi), c3 = uint32_t(counter_hi >> 32);
  philox_block(key, c0, c1, c2, c3);
  return {c0, c1, c2, c3};
}

// Element `index` of a stream: block (first + index) / 4, word (first + index) % 4.
ATTN_HD inline uint32_t philox_word(uint64_t seed, uint64_t first, uint64_t index) {
  const uint64_t c = first + index, block = c >> 2;
  uint32_t c0 = uint32_t(block), c1 = uint32_t(block >> 32), c2 = 0, c3 = 0;
  philox_block(seed, c0, c1, c2, c3);
  switch (c & 3) {
    case 0: return c0;
    case 1: return c1;
    case 2: return c2;
    default: return c3;
  }
}

// Random words -> uniform [0, 1): the float form uses 24 bits of one word, the double form
// 27 + 26 bits of two consecutive words. (Kernels that draw whole Philox blocks at once
// convert with these, so they agree bit for bit with the per-element functions below.)
ATTN_HD inline float uniform_float_from_word(uint32_t word) {
  return float(word >> 8) * (1.0f / 16777216.0f);  // 24 bits
}
ATTN_HD inline double uniform_double_from_words(uint32_t first_word, uint32_t second_word) {
  uint64_t hi = first_word >> 5, lo = second_word >> 6;         // 27 + 26 bits
  return double((hi << 26) | lo) * (1.0 / 9007199254740992.0);  // 53 bits / 2^53
}

// float32 dropout keeps element i when uniform_float_from_word(word_i) >= p, that is when
// (word_i >> 8) >= this threshold: the same decision as an integer test (CPU and CUDA kernels).
inline uint32_t float_keep_threshold(double p) { return uint32_t(std::ceil(p * 16777216.0)); }

ATTN_HD inline float philox_uniform_float(uint64_t seed, uint64_t first, uint64_t index) {
  return uniform_float_from_word(philox_word(seed, first, index));
}

ATTN_HD inline double philox_uniform_double(uint64_t seed, uint64_t first, uint64_t index) {
  // Two consecutive words of the stream: counters 2*index and 2*index+1.
  return uniform_double_from_words(philox_word(seed, first, 2 * index), philox_word(seed, first, 2 * index + 1));
}

}  // namespace attn
