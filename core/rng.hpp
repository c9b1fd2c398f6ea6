// Counter-based random numbers (Philox-4x32-10, Salmon et al. 2011). Element i of a random
// tensor is a pure function of (seed, offset, i), so the numbers do not depend on the thread
// count, and a CUDA kernel computing the same function yields the same tensor.
//
// A Generator is a (seed, offset) pair; every random op reserves a range of counters by
// advancing the offset, so consecutive ops draw independent streams. Its state is two
// integers, saved in checkpoints to resume training exactly.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>

#include "core/dtype.hpp"

#ifdef __CUDACC__
#define ATTN_HD __host__ __device__
#else
#define ATTN_HD
#endif

namespace attn {

// One Philox-4x32-10 block: 4 random 32-bit words for (key, counter).
ATTN_HD inline std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter_hi, uint64_t counter_lo);

struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;  // counters already consumed
};

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { state_.seed = seed; }
  GeneratorState state() const { return state_; }
  void set_state(GeneratorState s) { state_ = s; }
  void manual_seed(uint64_t seed) { state_ = {seed, 0}; }
  // Reserves n counters (one per element drawn); returns the first.
  uint64_t reserve(uint64_t n) { uint64_t first = state_.offset; state_.offset += n; return first; }
  // A child generator with its own stream, derived deterministically from this one.
  Generator split();

 private:
  GeneratorState state_;
};

// A generator whose stream is a pure function of `seed` and the words of `key` (e.g. a
// mixer, a head and a draw number): draws that depend on nothing else the run does.
Generator keyed_generator(uint64_t seed, std::initializer_list<uint64_t> key);

// Counters a random op over `numel` elements of `dtype` reserves: one per element (two for
// float64), rounded up to an even count since normal() draws Box-Muller pairs.
uint64_t random_counters(int64_t numel, DType dtype);

// The process-wide default generator (seeded by attn::manual_seed).
Generator& default_generator();
void manual_seed(uint64_t seed);

// Element `index` of the stream starting at counter `first` of `seed`:
// a uniform float in [0, 1), or a uniform double in [0, 1) using 53 random bits.
ATTN_HD float philox_uniform_float(uint64_t seed, uint64_t first, uint64_t index);
ATTN_HD double philox_uniform_double(uint64_t seed, uint64_t first, uint64_t index);

}  // namespace attn

#include "core/rng_impl.hpp"
