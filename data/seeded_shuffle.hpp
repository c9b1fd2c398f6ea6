// Seeded, platform-independent shuffling for data/ (corpus splits, batch order).
// std::shuffle and std::uniform_int_distribution are implementation-defined, so a seed would
// not give the same order with another standard library; this uses SplitMix64 (Steele et al.
// 2014) and a Fisher-Yates shuffle with Lemire's unbiased bounded draw, fully specified here.
// data/ does not use core/'s Philox RNG: it must not depend on the tensor engine (docs/design.md §1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace attn::data {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform integer in [0, bound), bound > 0.
  uint64_t below(uint64_t bound);

 private:
  uint64_t state_;
};

// Fisher-Yates: for i = n-1 .. 1, swap items[i] with items[below(i + 1)].
template <typename T>
void seeded_shuffle(std::vector<T>& items, uint64_t seed) {
  SplitMix64 rng(seed);
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.below(i)]);
}

// A seeded permutation of 0..n-1.
std::vector<size_t> seeded_permutation(size_t n, uint64_t seed);

}  // namespace attn::data
