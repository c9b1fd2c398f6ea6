#include "core/matmul_precision.hpp"

#include <atomic>
#include <oneapi/dnnl/dnnl.hpp>

#include "core/error.hpp"

namespace attn {
namespace {
std::atomic<MatmulPrecision> current_precision{MatmulPrecision::Float32};
}

void set_matmul_precision(MatmulPrecision precision) { current_precision.store(precision); }

MatmulPrecision matmul_precision() { return current_precision.load(std::memory_order_relaxed); }

MatmulPrecision parse_matmul_precision(std::string_view name) {
  if (name == "fp32") return MatmulPrecision::Float32;
  if (name == "bf16") return MatmulPrecision::BFloat16;
  throw Error(fmt::format("unknown matmul precision '{}': expected fp32 or bf16", name));
}

std::string to_string(MatmulPrecision precision) {
  return precision == MatmulPrecision::BFloat16 ? "bf16" : "fp32";
}

bool cpu_has_fast_bf16() {
  // oneDNN's ISA levels are nested bit sets: a level includes every bit of the ones below.
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (isa & bf16) == bf16;
}

}  // namespace attn
