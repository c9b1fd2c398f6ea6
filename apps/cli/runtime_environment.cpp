// See runtime_environment.hpp.
#include "apps/cli/runtime_environment.hpp"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace attn::app {
namespace {

// OpenBLAS's x86-64 cores that use no AVX (its DYNAMIC_ARCH names).
constexpr std::string_view kSseOnlyCores[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom"};

CpuVectorUnits this_cpu() {
  __builtin_cpu_init();
  return {.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"),
          .avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")};
}

bool unset(const char* name) { return std::getenv(name) == nullptr; }

}  // namespace

std::string openblas_core_to_force(std::string_view detected_core, CpuVectorUnits cpu) {
  if (std::find(std::begin(kSseOnlyCores), std::end(kSseOnlyCores), detected_core) == std::end(kSseOnlyCores)) return "";
  return cpu.avx512 ? "SkylakeX" : cpu.avx2 ? "Haswell" : "";
}

void prepare_runtime_environment(char** argv) {
  bool changed = false;
  if (unset("OMP_WAIT_POLICY") && unset("GOMP_SPINCOUNT")) changed |= setenv("GOMP_SPINCOUNT", "30000", 1) == 0;
  if (unset("OPENBLAS_CORETYPE")) {
    const std::string core = openblas_core_to_force(openblas_get_corename(), this_cpu());
    if (!core.empty()) changed |= setenv("OPENBLAS_CORETYPE", core.c_str(), 1) == 0;
  }
  if (changed) execv("/proc/self/exe", argv);  // returns only on failure: carry on with the defaults
}

}  // namespace attn::app
