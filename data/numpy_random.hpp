// NumPy's default generator, numpy.random.default_rng(seed), reproduced as far as sacreBLEU's
// paired tests use it (data/bleu_significance.hpp), so that a seed draws NumPy's numbers:
//
//   SeedSequence(seed)   hashes the seed's 32-bit words into a pool of four and draws the
//                        generator's 256-bit initial state from it (NumPy's seed mixing);
//   PCG64                128-bit LCG state, 64-bit output by xor-shift and random rotation
//                        (O'Neill's XSL-RR); 32-bit draws use the low then the high half;
//   integers(0, n)       Lemire's multiply-shift with rejection on 32-bit draws (n ≤ 2^32);
//   integers(2, dtype=bool)
//                        32 values from each 32-bit draw, lowest bit first (NumPy's buffered
//                        bounded bool), the buffer living for one call of integers().
//
// Also NumPy's pairwise summation (np.sum, np.mean of float64), whose rounding differs from a
// plain loop's.
#pragma once
#include <cstdint>
#include <span>

namespace attn::data {

class NumpyDefaultRng {
 public:
  explicit NumpyDefaultRng(uint32_t seed);

  uint64_t next_uint64();
  uint32_t next_uint32();
  // Generator.integers(0, n): uniform in [0, n); n in [1, 2^32 − 1].
  uint32_t integer_below(uint32_t n);

 private:
  unsigned __int128 state_ = 0, increment_ = 0;
  bool has_saved_half_ = false;
  uint32_t saved_half_ = 0;
};

// The values of one call of Generator.integers(2, size=count, dtype=bool), read one after
// another (row after row for a matrix): bit 0 of a fresh 32-bit draw, then bits 1 to 31 of it.
// A second call starts a fresh draw, so each call needs its own NumpyBoolDraws.
class NumpyBoolDraws {
 public:
  explicit NumpyBoolDraws(NumpyDefaultRng& rng) : rng_(rng) {}
  bool next();

 private:
  NumpyDefaultRng& rng_;
  uint32_t bits_ = 0;
  int bits_left_ = 0;  // unread bits of bits_ above the current one
};

// np.sum of a contiguous float64 array: blocks of 8 running sums up to 128 values, halves
// above (NumPy's pairwise_sum).
double numpy_pairwise_sum(std::span<const double> values);

}  // namespace attn::data
