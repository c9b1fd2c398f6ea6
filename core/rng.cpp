// The default generator and generator splitting (core/rng.hpp; Philox-4x32-10 in rng_impl.hpp).
#include "core/rng.hpp"

namespace attn {

Generator Generator::split() {
  // The child's seed is one Philox block drawn from this stream (counter_hi = 1 keeps it
  // apart from the element streams, which use counter_hi = 0).
  uint64_t first = reserve(4);
  std::array<uint32_t, 4> words = philox4x32(state_.seed, 1, first);
  return Generator((uint64_t(words[0]) << 32) | words[1]);
}

Generator keyed_generator(uint64_t seed, std::initializer_list<uint64_t> key) {
  // Each word is hashed into the seed by one Philox block (counter_hi = 2: apart from the
  // element streams and from split()).
  for (uint64_t word : key) {
    const std::array<uint32_t, 4> words = philox4x32(seed, 2, word);
    seed = (uint64_t(words[0]) << 32) | words[1];
  }
  return Generator(seed);
}

uint64_t random_counters(int64_t numel, DType dtype) {
  const uint64_t even = uint64_t(numel + (numel & 1));
  return dtype == DType::Float64 ? 2 * even : even;
}

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace attn
