// Philox-4x32-10 and the generator (core/rng.hpp, core/rng.cpp), and the CPU kernels'
// SIMD Philox (core/cpu/philox_simd.hpp).
#include <catch.hpp>

#include "core/cpu/philox_simd.hpp"
#include "core/rng.hpp"

using namespace attn;

TEST_CASE("Philox-4x32-10 reproduces the Random123 known-answer vectors") {
  CHECK(philox4x32(0, 0, 0) == std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(philox4x32(~uint64_t(0), ~uint64_t(0), ~uint64_t(0)) ==
        std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  // counter = (243f6a88, 85a308d3, 13198a2e, 03707344), key = (a4093822, 299f31d0): digits of pi.
  CHECK(philox4x32(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull) ==
        std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("the SIMD Philox gives every block's words bit for bit, across 32-bit counter carries") {
  constexpr int kLanes = 16;
  for (const uint64_t key : {uint64_t(0), uint64_t(0x299f31d0a4093822ull), ~uint64_t(0)})
    for (const uint64_t first_block : {uint64_t(0), uint64_t(12345), (uint64_t(1) << 32) - 7, ~uint64_t(0) - 20}) {
      uint32_t words[4][kLanes];
      cpu::philox4x32_lanes<kLanes>(key, first_block, words);
      for (int l = 0; l < kLanes; ++l) {
        const std::array<uint32_t, 4> block = philox4x32(key, 0, first_block + uint64_t(l));
        for (int w = 0; w < 4; ++w) CHECK(words[w][l] == block[w]);
      }
    }
}

TEST_CASE("uniform draws lie in [0, 1) and are pure functions of (seed, first, index)") {
  for (uint64_t i = 0; i < 1000; ++i) {
    const float f = philox_uniform_float(42, 7, i);
    const double d = philox_uniform_double(42, 7, i);
    CHECK((f >= 0.0f && f < 1.0f));
    CHECK((d >= 0.0 && d < 1.0));
  }
  CHECK(philox_uniform_float(42, 7, 3) == philox_uniform_float(42, 0, 10));  // same counter
  CHECK(philox_uniform_float(42, 7, 3) != philox_uniform_float(43, 7, 3));
}

TEST_CASE("generators reserve counters and split deterministically") {
  Generator g(5);
  CHECK(g.reserve(10) == 0);
  CHECK(g.reserve(4) == 10);
  CHECK(g.state().offset == 14);
  CHECK(random_counters(5, DType::Float32) == 6);
  CHECK(random_counters(6, DType::Float32) == 6);
  CHECK(random_counters(5, DType::Float64) == 12);

  Generator a(9), b(9);
  Generator ca = a.split(), cb = b.split();
  CHECK(ca.state().seed == cb.state().seed);
  CHECK(ca.state().seed != 9);
  CHECK(a.state().offset == 4);
  CHECK(a.split().state().seed != ca.state().seed);  // the next split is another stream

  Generator restored;
  restored.set_state(g.state());
  CHECK(restored.reserve(1) == 14);
  g.manual_seed(3);
  CHECK(g.state().seed == 3);
  CHECK(g.state().offset == 0);
}

TEST_CASE("manual_seed resets the default generator") {
  manual_seed(123);
  const uint64_t first = default_generator().reserve(8);
  CHECK(first == 0);
  manual_seed(123);
  CHECK(default_generator().state().offset == 0);
  CHECK(default_generator().state().seed == 123);
}
