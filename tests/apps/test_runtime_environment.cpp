// The environment the attnlab binary chooses for its runtime libraries (apps/cli/runtime_environment.hpp):
// which OpenBLAS kernels to force when OpenBLAS falls back to SSE-only ones. test_cli.cpp checks
// the binary's `info` on this machine.
#include <catch.hpp>

#include "apps/cli/runtime_environment.hpp"

using attn::app::CpuVectorUnits;
using attn::app::openblas_core_to_force;

TEST_CASE("an SSE-only OpenBLAS core is replaced by the best kernels the CPU runs") {
  CHECK(openblas_core_to_force("Prescott", {.avx512 = true, .avx2 = true}) == "SkylakeX");
  CHECK(openblas_core_to_force("Nehalem", {.avx512 = false, .avx2 = true}) == "Haswell");
  CHECK(openblas_core_to_force("Core2", {.avx512 = false, .avx2 = false}).empty());  // nothing better
}

TEST_CASE("OpenBLAS's own choice of vector kernels stands") {
  for (const char* core : {"SkylakeX", "Cooperlake", "Haswell", "Zen", "Sandybridge", "Piledriver"})
    CHECK(openblas_core_to_force(core, {.avx512 = true, .avx2 = true}).empty());
  CHECK(openblas_core_to_force("", {.avx512 = true, .avx2 = true}).empty());
}
