// See numpy_random.hpp. Constants are NumPy's (bit_generator.pyx, pcg64.h).
#include "data/numpy_random.hpp"

#include <array>

namespace attn::data {
namespace {

// SeedSequence's hash constants.
constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr size_t kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  return value ^ (value >> kXShift);
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  return result ^ (result >> kXShift);
}

// SeedSequence(seed).pool for a seed below 2^32 (one word of entropy).
std::array<uint32_t, kPoolSize> seed_pool(uint32_t seed) {
  std::array<uint32_t, kPoolSize> pool{};
  uint32_t hash_const = kInitA;
  for (size_t i = 0; i < kPoolSize; ++i) pool[i] = hashmix(i == 0 ? seed : 0, hash_const);
  for (size_t source = 0; source < kPoolSize; ++source)
    for (size_t target = 0; target < kPoolSize; ++target)
      if (source != target) pool[target] = mix(pool[target], hashmix(pool[source], hash_const));
  return pool;
}

// SeedSequence.generate_state(n, uint32): the pool cycled through a second hash.
template <size_t N>
std::array<uint32_t, N> generate_state(const std::array<uint32_t, kPoolSize>& pool) {
  std::array<uint32_t, N> state{};
  uint32_t hash_const = kInitB;
  for (size_t i = 0; i < N; ++i) {
    uint32_t value = pool[i % kPoolSize] ^ hash_const;
    hash_const *= kMultB;
    value *= hash_const;
    state[i] = value ^ (value >> kXShift);
  }
  return state;
}

constexpr unsigned __int128 kPcgMultiplier =
    (static_cast<unsigned __int128>(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;

unsigned __int128 words_to_u128(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
  // generate_state(4, uint64) viewed as two uint64 pairs; the first uint64 is the high half.
  const uint64_t high = uint64_t(w0) | (uint64_t(w1) << 32), low = uint64_t(w2) | (uint64_t(w3) << 32);
  return (static_cast<unsigned __int128>(high) << 64) | low;
}

uint64_t rotate_right(uint64_t value, unsigned rotation) {
  return (value >> rotation) | (value << ((64 - rotation) & 63));
}

constexpr size_t kPairwiseBlock = 128;

}  // namespace

NumpyDefaultRng::NumpyDefaultRng(uint32_t seed) {
  const std::array<uint32_t, 8> words = generate_state<8>(seed_pool(seed));
  const unsigned __int128 initial_state = words_to_u128(words[0], words[1], words[2], words[3]);
  const unsigned __int128 sequence = words_to_u128(words[4], words[5], words[6], words[7]);
  increment_ = (sequence << 1) | 1;  // PCG's srandom: step, add the seed, step
  state_ = increment_;
  state_ += initial_state;
  state_ = state_ * kPcgMultiplier + increment_;
}

uint64_t NumpyDefaultRng::next_uint64() {
  state_ = state_ * kPcgMultiplier + increment_;
  return rotate_right(uint64_t(state_ >> 64) ^ uint64_t(state_), unsigned(state_ >> 122));
}

uint32_t NumpyDefaultRng::next_uint32() {
  if (has_saved_half_) {
    has_saved_half_ = false;
    return saved_half_;
  }
  const uint64_t next = next_uint64();
  has_saved_half_ = true;
  saved_half_ = uint32_t(next >> 32);
  return uint32_t(next);
}

uint32_t NumpyDefaultRng::integer_below(uint32_t n) {
  uint64_t product = uint64_t(next_uint32()) * n;
  uint32_t leftover = uint32_t(product);
  if (leftover < n) {
    const uint32_t threshold = (UINT32_MAX - (n - 1)) % n;
    while (leftover < threshold) {
      product = uint64_t(next_uint32()) * n;
      leftover = uint32_t(product);
    }
  }
  return uint32_t(product >> 32);
}

bool NumpyBoolDraws::next() {
  if (bits_left_ == 0) {
    bits_ = rng_.next_uint32();
    bits_left_ = 31;
  } else {
    bits_ >>= 1;
    --bits_left_;
  }
  return (bits_ & 1u) != 0;
}

double numpy_pairwise_sum(std::span<const double> values) {
  const size_t n = values.size();
  if (n < 8) {
    double sum = 0.0;
    for (double v : values) sum += v;
    return sum;
  }
  if (n <= kPairwiseBlock) {
    std::array<double, 8> partial{};
    for (size_t j = 0; j < 8; ++j) partial[j] = values[j];
    size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (size_t j = 0; j < 8; ++j) partial[j] += values[i + j];
    double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
                 ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    for (; i < n; ++i) sum += values[i];
    return sum;
  }
  size_t half = n / 2;
  half -= half % 8;
  return numpy_pairwise_sum(values.first(half)) + numpy_pairwise_sum(values.subspan(half));
}

}  // namespace attn::data
