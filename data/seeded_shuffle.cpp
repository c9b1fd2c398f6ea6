#include "data/seeded_shuffle.hpp"

#include <numeric>

namespace attn::data {

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::below(uint64_t bound) {
  // Lemire 2019: multiply-shift with rejection of the biased low range.
  unsigned __int128 product = static_cast<unsigned __int128>(next()) * bound;
  auto low = static_cast<uint64_t>(product);
  if (low < bound) {
    uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<unsigned __int128>(next()) * bound;
      low = static_cast<uint64_t>(product);
    }
  }
  return static_cast<uint64_t>(product >> 64);
}

std::vector<size_t> seeded_permutation(size_t n, uint64_t seed) {
  std::vector<size_t> permutation(n);
  std::iota(permutation.begin(), permutation.end(), size_t{0});
  seeded_shuffle(permutation, seed);
  return permutation;
}

}  // namespace attn::data
