// Philox-4x32-10 (core/rng_impl.hpp) for several consecutive blocks at once in SIMD
// registers, bit-identical to philox4x32 block by block. The CPU random kernels draw their
// words here (core/cpu/philox_stream.hpp).
//
// Why intrinsics: a round needs the high and low halves of 32 × 32-bit products. x86 has no
// vector "multiply high" for 32-bit lanes, so GCC 12 leaves the plain-loop form of the rounds
// scalar (it measured 4-5x slower per word than this on AVX-512 and AVX2). The one x86
// instruction needed is the even-lane widening multiply (PMULUDQ: 32-bit lanes 0, 2, 4, ...
// times 32-bit lanes → 64-bit products); everything else (shifts, masks, XOR) is written with
// GCC/Clang vector extensions, so one body serves AVX-512, AVX2 and the SSE2 of every x86-64.
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/rng.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace attn::cpu {

#if defined(__x86_64__)

#if defined(__AVX512F__)
using PhiloxRegister = __m512i;
// The zero-masked form with every lane selected is PMULUDQ itself; GCC 12's plain
// _mm512_mul_epu32 warns about its own undefined pass-through register.
inline PhiloxRegister multiply_even_lanes(PhiloxRegister a, PhiloxRegister b) { return _mm512_maskz_mul_epu32(0xff, a, b); }
#elif defined(__AVX2__)
using PhiloxRegister = __m256i;
inline PhiloxRegister multiply_even_lanes(PhiloxRegister a, PhiloxRegister b) { return _mm256_mul_epu32(a, b); }
#else
using PhiloxRegister = __m128i;
inline PhiloxRegister multiply_even_lanes(PhiloxRegister a, PhiloxRegister b) { return _mm_mul_epu32(a, b); }
#endif

// One register seen as 32-bit words (one Philox block per word) or as 64-bit pairs of them.
typedef uint32_t PhiloxWords __attribute__((vector_size(sizeof(PhiloxRegister))));
typedef uint64_t PhiloxPairs __attribute__((vector_size(sizeof(PhiloxRegister))));
inline constexpr int kPhiloxRegisterLanes = int(sizeof(PhiloxRegister) / sizeof(uint32_t));

// hi[l], lo[l] = the high and low 32 bits of x[l] · m, for every lane l.
inline void multiply_halves(PhiloxWords x, uint32_t m, PhiloxWords& hi, PhiloxWords& lo) {
  const PhiloxPairs multiplier = PhiloxPairs{} + uint64_t(m);
  const auto widening = [&](PhiloxPairs lanes) {
    return PhiloxPairs(multiply_even_lanes(PhiloxRegister(lanes), PhiloxRegister(multiplier)));
  };
  const PhiloxPairs even = widening(PhiloxPairs(x)), odd = widening(PhiloxPairs(x) >> 32);
  lo = PhiloxWords((even & 0xffffffffu) | (odd << 32));
  hi = PhiloxWords((even >> 32) | (odd & 0xffffffff00000000u));
}

// The blocks of `Lanes` consecutive counters (counter_hi = 0, counter_lo = first_block + l),
// word w of block l in words[w][l]: philox4x32's rounds on whole registers of blocks.
template <int Lanes>
inline void philox4x32_lanes(uint64_t key, uint64_t first_block, uint32_t (&words)[4][Lanes]) {
  static_assert(Lanes % kPhiloxRegisterLanes == 0, "whole registers of blocks");
  for (int g = 0; g < Lanes; g += kPhiloxRegisterLanes) {
    for (int l = 0; l < kPhiloxRegisterLanes; ++l) {
      const uint64_t counter = first_block + uint64_t(g + l);
      words[0][g + l] = uint32_t(counter);
      words[1][g + l] = uint32_t(counter >> 32);
    }
    PhiloxWords c0, c1, c2 = {}, c3 = {};
    std::memcpy(&c0, words[0] + g, sizeof c0);
    std::memcpy(&c1, words[1] + g, sizeof c1);
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int r = 0; r < philox::kRounds; ++r, k0 += philox::kW0, k1 += philox::kW1) {
      PhiloxWords hi0, lo0, hi2, lo2;  // philox::apply_round on every lane
      multiply_halves(c0, philox::kM0, hi0, lo0);
      multiply_halves(c2, philox::kM1, hi2, lo2);
      c0 = hi2 ^ c1 ^ k0;
      c2 = hi0 ^ c3 ^ k1;
      c1 = lo2;
      c3 = lo0;
    }
    for (auto [w, c] : {std::pair{0, &c0}, {1, &c1}, {2, &c2}, {3, &c3}}) std::memcpy(words[w] + g, c, sizeof *c);
  }
}

#else  // not x86-64: block by block

template <int Lanes>
inline void philox4x32_lanes(uint64_t key, uint64_t first_block, uint32_t (&words)[4][Lanes]) {
  for (int l = 0; l < Lanes; ++l) {
    const std::array<uint32_t, 4> block = philox4x32(key, 0, first_block + uint64_t(l));
    for (int w = 0; w < 4; ++w) words[w][l] = block[w];
  }
}

#endif

}  // namespace attn::cpu
