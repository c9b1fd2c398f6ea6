// Runs of consecutive words of a Philox stream (core/rng.hpp), for the CPU random kernels
// (core/cpu/random.cpp) and the dropout family (core/cpu/dropout.cpp): whole groups of
// kPhiloxLanes blocks go through the SIMD Philox (core/cpu/philox_simd.hpp), a partial block at either
// end through the scalar one, so word k is exactly philox_word(seed, first, start + k).
#pragma once
#include <cstdint>

#include "core/cpu/philox_simd.hpp"

namespace attn::cpu {

inline constexpr int kPhiloxLanes = 16;  // Philox blocks computed side by side (SIMD lanes)

// words[k] = word (first + start + k) of the stream, k < n.
inline void philox_words(uint64_t seed, uint64_t first, uint64_t start, int64_t n, uint32_t* words) {
  uint64_t counter = first + start;
  int64_t k = 0;
  auto scalar_block = [&] {
    const std::array<uint32_t, 4> block = philox4x32(seed, 0, counter >> 2);
    for (unsigned w = unsigned(counter & 3); w < 4 && k < n; ++w, ++k, ++counter) words[k] = block[w];
  };
  if (counter & 3) scalar_block();
  uint32_t lanes[4][kPhiloxLanes];
  for (; n - k >= 4 * kPhiloxLanes; k += 4 * kPhiloxLanes, counter += 4 * kPhiloxLanes) {
    philox4x32_lanes<kPhiloxLanes>(seed, counter >> 2, lanes);
    for (int l = 0; l < kPhiloxLanes; ++l)
      for (int w = 0; w < 4; ++w) words[k + 4 * l + w] = lanes[w][l];
  }
  while (k < n) scalar_block();
}

}  // namespace attn::cpu
