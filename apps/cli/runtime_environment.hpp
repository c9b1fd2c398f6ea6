// Environment variables that runtime libraries read once, when they are loaded: the attnlab
// binary sets those the user has not set and re-executes itself, first thing in main, so
// that they take effect.
//
// GOMP_SPINCOUNT: how long idle OpenMP threads spin before sleeping. With OMP_WAIT_POLICY
// unset, libgomp lets an idle thread spin 300,000 iterations before it sleeps. When the
// machine is busy, a spinning thread burns the time slice its descheduled partner needs to
// reach the barrier. Measured with bench/bench_step_profile (transformer_tiny, 2 threads,
// 2 cores; tokens/s):
//
//                           quiet machine   two other busy processes
//   libgomp default               3,337            507
//   GOMP_SPINCOUNT=30000          3,287          1,027
//   OMP_WAIT_POLICY=passive       3,080          1,221
//
// so attnlab uses GOMP_SPINCOUNT=30000 unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT.
//
// OPENBLAS_CORETYPE: OpenBLAS picks its kernels by CPU model, and a version older than the CPU
// can fall back to its SSE3 kernels ("Prescott"): Debian 12's OpenBLAS 0.3.21 does so on a
// 2-core Xeon with AVX-512, AVX512-BF16 and AMX, where its AVX-512 kernels ("SkylakeX") trained
// transformer_tiny 11-23% faster (bench_train, 1 thread, two alternating pairs on a busy
// machine). When OpenBLAS reports an SSE-only core on a CPU with AVX-512 or AVX2, attnlab sets
// OPENBLAS_CORETYPE to the matching kernels unless the user set it.
#pragma once
#include <string>
#include <string_view>

namespace attn::app {

struct CpuVectorUnits {
  bool avx512 = false;  // AVX-512 F, BW, DQ and VL, enabled by the OS
  bool avx2 = false;    // AVX2 and FMA, enabled by the OS
};

// The OPENBLAS_CORETYPE to force when OpenBLAS detected `detected_core` on a CPU with `cpu`;
// empty when its own choice stands (it is not an SSE-only fallback, or the CPU has no more).
std::string openblas_core_to_force(std::string_view detected_core, CpuVectorUnits cpu);

// Sets the variables above that the user left unset and re-executes argv (via
// /proc/self/exe); returns without doing anything when none needs setting, or if
// re-execution fails (then the libraries' defaults apply).
void prepare_runtime_environment(char** argv);

}  // namespace attn::app
