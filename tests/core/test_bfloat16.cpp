// float <-> bfloat16 conversion (core/bfloat16.hpp): round to nearest even on the dropped
// 16 bits, NaN kept quiet, infinities and overflow as IEEE rounding gives them.
#include <catch.hpp>

#include <bit>
#include <cmath>
#include <limits>

#include "core/bfloat16.hpp"

using namespace attn;

namespace {
float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }
}  // namespace

TEST_CASE("values with at most 8 significant bits convert exactly", "[bfloat16]") {
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 65280.0f, 1.0f / 1024.0f}) {
    CAPTURE(v);
    REQUIRE(float_to_bfloat16(v) == uint16_t(std::bit_cast<uint32_t>(v) >> 16));
    REQUIRE(bfloat16_to_float(float_to_bfloat16(v)) == v);
  }
}

TEST_CASE("rounding is to nearest, ties to even", "[bfloat16]") {
  // 1 + 2^-8 lies half-way between 1 and 1 + 2^-7: the even neighbour is 1.
  REQUIRE(bfloat16_to_float(float_to_bfloat16(from_bits(0x3f808000u))) == 1.0f);
  // (1 + 2^-7) + 2^-8 is half-way between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  REQUIRE(float_to_bfloat16(from_bits(0x3f818000u)) == 0x3f82u);
  // Just above and below half-way round to the nearer value.
  REQUIRE(float_to_bfloat16(from_bits(0x3f808001u)) == 0x3f81u);
  REQUIRE(float_to_bfloat16(from_bits(0x3f807fffu)) == 0x3f80u);
  // Negative values round by magnitude.
  REQUIRE(float_to_bfloat16(from_bits(0xbf808001u)) == 0xbf81u);
  // The largest float rounds up to infinity, as IEEE round-to-nearest does.
  REQUIRE(std::isinf(bfloat16_to_float(float_to_bfloat16(std::numeric_limits<float>::max()))));
}

TEST_CASE("the rounding error is at most half a unit in the last place", "[bfloat16]") {
  for (uint32_t bits = 0x3f800000u; bits < 0x40000000u; bits += 0x1357u) {
    const float v = from_bits(bits);
    const float r = bfloat16_to_float(float_to_bfloat16(v));
    CAPTURE(v, r);
    REQUIRE(std::abs(double(r) - double(v)) <= std::ldexp(1.0, -8) + 1e-12);  // ulp 2^-7 on [1, 2)
  }
}

TEST_CASE("NaN stays NaN and infinities stay infinite", "[bfloat16]") {
  const float nan_low_payload = from_bits(0x7f800001u);  // would round to +inf if treated as a number
  REQUIRE(std::isnan(bfloat16_to_float(float_to_bfloat16(nan_low_payload))));
  REQUIRE(std::isnan(bfloat16_to_float(float_to_bfloat16(-std::numeric_limits<float>::quiet_NaN()))));
  REQUIRE(bfloat16_to_float(float_to_bfloat16(std::numeric_limits<float>::infinity())) ==
          std::numeric_limits<float>::infinity());
  REQUIRE(bfloat16_to_float(float_to_bfloat16(-std::numeric_limits<float>::infinity())) ==
          -std::numeric_limits<float>::infinity());
}
