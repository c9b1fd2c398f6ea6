#include "data/python_statistics_mean.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {
namespace {

// A non-negative multiple of 2^-1074 (the smallest double) held exactly: every finite double is
// one, and sums of up to 2^63 doubles fit.
class ExactSum {
 public:
  void add(double value) {
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    const uint64_t exponent = bits >> 52, fraction = bits & ((uint64_t(1) << 52) - 1);
    // value = mantissa · 2^(shift − 1074); subnormals have no implicit leading bit.
    const uint64_t mantissa = exponent == 0 ? fraction : fraction | (uint64_t(1) << 52);
    const size_t shift = exponent == 0 ? 0 : size_t(exponent - 1);
    add_at(shift / 64, mantissa << (shift % 64));
    if (shift % 64 != 0) add_at(shift / 64 + 1, mantissa >> (64 - shift % 64));
  }

  // The sum divided by `count`, rounded to the nearest double, ties to even.
  double divided_by(uint64_t count) const {
    Limbs quotient{};
    unsigned __int128 remainder = 0;
    for (size_t i = kLimbs; i-- > 0;) {
      remainder = (remainder << 64) | limbs_[i];
      quotient[i] = uint64_t(remainder / count);
      remainder %= count;
    }
    // Keep 53 significant bits (all of them below 2^53 ulps: a subnormal or exact result).
    const size_t top = highest_bit(quotient);
    const size_t dropped = top > 52 ? top - 52 : 0;
    uint64_t mantissa = bits_from(quotient, dropped);
    bool round_up;
    if (dropped == 0) {
      const unsigned __int128 twice = remainder * 2;
      round_up = twice > count || (twice == count && (mantissa & 1));
    } else {
      const bool half = bit(quotient, dropped - 1);
      bool below_half = remainder != 0;
      for (size_t b = 0; b + 1 < dropped && !below_half; ++b) below_half = bit(quotient, b);
      round_up = half && (below_half || (mantissa & 1));
    }
    mantissa += round_up;
    return std::ldexp(double(mantissa), int(dropped) - 1074);
  }

 private:
  static constexpr size_t kLimbs = 34;  // 2^(2046 − 1 + 53 + 63) < 2^(34·64)
  using Limbs = std::array<uint64_t, kLimbs>;

  void add_at(size_t limb, uint64_t value) {
    for (; value != 0 && limb < kLimbs; ++limb) {
      limbs_[limb] += value;
      value = limbs_[limb] < value;  // the carry
    }
  }
  static bool bit(const Limbs& limbs, size_t b) { return (limbs[b / 64] >> (b % 64)) & 1; }
  // Index of the highest set bit; 0 for zero.
  static size_t highest_bit(const Limbs& limbs) {
    for (size_t i = kLimbs; i-- > 0;)
      if (limbs[i] != 0) return i * 64 + 63 - size_t(std::countl_zero(limbs[i]));
    return 0;
  }
  // The 64 bits from bit `low` up.
  static uint64_t bits_from(const Limbs& limbs, size_t low) {
    const size_t limb = low / 64, offset = low % 64;
    uint64_t value = limbs[limb] >> offset;
    if (offset != 0 && limb + 1 < kLimbs) value |= limbs[limb + 1] << (64 - offset);
    return value;
  }

  Limbs limbs_{};
};

}  // namespace

double python_statistics_mean(const std::vector<double>& values) {
  if (values.empty()) throw DataError("mean of no values");
  const bool negative = std::any_of(values.begin(), values.end(), [](double value) { return value < 0; });
  ExactSum sum;
  for (double value : values) {
    if (!std::isfinite(value) || (negative ? value > 0 : value < 0))
      throw DataError(fmt::format("exact mean: {} is not finite or of the others' sign", value));
    sum.add(std::abs(value));
  }
  const double mean = sum.divided_by(values.size());
  return negative ? -mean : mean;
}

}  // namespace attn::data
