// How float32 matrix products are computed by the CPU backend (core/cpu/matmul.cpp).
//
//   Float32   full float32 products and sums (the default).
//   BFloat16  both operands rounded to bfloat16 (round to nearest even), products summed in
//             float32, result float32. Everything else — weights, activations, gradients,
//             optimizer state — stays float32. This is the contract of PyTorch's
//             torch.set_float32_matmul_precision("medium") and of its CPU autocast for
//             linear layers; on CPUs with bfloat16 dot-product instructions (AVX512-BF16,
//             AMX) such products run about twice as fast (bench/README.md).
//
// A process-wide setting, like the thread count: the trainer and the decoding commands set
// it from --matmul-precision. float64 products are never affected.
#pragma once
#include <string>
#include <string_view>

namespace attn {

enum class MatmulPrecision { Float32, BFloat16 };

void set_matmul_precision(MatmulPrecision precision);
MatmulPrecision matmul_precision();

// "fp32" | "bf16"; anything else throws attn::Error naming the accepted values.
MatmulPrecision parse_matmul_precision(std::string_view name);
std::string to_string(MatmulPrecision precision);

// Sets the precision for its lifetime, then restores the previous one.
class ScopedMatmulPrecision {
 public:
  explicit ScopedMatmulPrecision(MatmulPrecision precision) : previous_(matmul_precision()) {
    set_matmul_precision(precision);
  }
  ~ScopedMatmulPrecision() { set_matmul_precision(previous_); }
  ScopedMatmulPrecision(const ScopedMatmulPrecision&) = delete;
  ScopedMatmulPrecision& operator=(const ScopedMatmulPrecision&) = delete;

 private:
  MatmulPrecision previous_;
};

// Whether this CPU has bfloat16 dot-product instructions; without them BFloat16 products are
// emulated and slower than Float32 ones.
bool cpu_has_fast_bf16();

}  // namespace attn
