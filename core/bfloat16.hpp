// bfloat16 <-> float32. A bfloat16 is the upper half of an IEEE-754 float32: the same sign
// and 8-bit exponent (so the same range), 7 mantissa bits instead of 23. Rounding to it is
// round-to-nearest-even on the dropped 16 bits; NaN stays NaN (quiet), ±inf stays ±inf.
// Used by the bf16 matrix-product path (core/matmul_precision.hpp, core/cpu/onednn_gemm.cpp).
#pragma once
#include <bit>
#include <cstdint>

namespace attn {

inline uint16_t float_to_bfloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  // Adding 0x7fff plus the lowest kept bit rounds half-way cases to the even neighbour.
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return is_nan ? uint16_t((bits >> 16) | 0x0040u) : uint16_t(rounded >> 16);
}

inline float bfloat16_to_float(uint16_t value) { return std::bit_cast<float>(uint32_t(value) << 16); }

}  // namespace attn
