// The matmul precision setting (core/matmul_precision.hpp) and the large-GEMM paths behind it
// (core/cpu/onednn_gemm.cpp): with BFloat16 a product equals the float64 product of the
// bf16-rounded operands up to float32 summation error, on every operand layout the CPU GEMM
// accepts; float32 products are untouched by rounding.
#include <catch.hpp>

#include <cmath>
#include <limits>
#include <tuple>

#include "core/bfloat16.hpp"
#include "core/error.hpp"
#include "core/matmul_precision.hpp"
#include "core/ops.hpp"
#include "kernel_test_data.hpp"

using namespace attn;
using attn::test::max_abs_diff;
using attn::test::random_tensor;

namespace {

// Each element of t rounded to bfloat16, as float64 values in row-major order of t's shape.
std::vector<double> rounded_values(const Tensor& t) {
  std::vector<double> values = t.to_vector();
  for (double& v : values) v = bfloat16_to_float(float_to_bfloat16(float(v)));
  return values;
}

// out = alpha · a·b + beta · before, in float64 (a: m×k, b: k×n row-major values).
std::vector<double> reference(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& before,
                              int64_t m, int64_t k, int64_t n, double alpha, double beta) {
  std::vector<double> out(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += a[size_t(i * k + p)] * b[size_t(p * n + j)];
      out[size_t(i * n + j)] = alpha * sum + (beta == 0.0 ? 0.0 : beta * before[size_t(i * n + j)]);
    }
  return out;
}

}  // namespace

TEST_CASE("precision names parse and print; unknown names are rejected", "[matmul_precision]") {
  REQUIRE(parse_matmul_precision("fp32") == MatmulPrecision::Float32);
  REQUIRE(parse_matmul_precision("bf16") == MatmulPrecision::BFloat16);
  REQUIRE(to_string(MatmulPrecision::BFloat16) == "bf16");
  REQUIRE_THROWS_WITH(parse_matmul_precision("fp16"), Catch::Contains("fp16") && Catch::Contains("fp32 or bf16"));
}

TEST_CASE("ScopedMatmulPrecision restores the previous setting", "[matmul_precision]") {
  REQUIRE(matmul_precision() == MatmulPrecision::Float32);
  {
    ScopedMatmulPrecision bf16(MatmulPrecision::BFloat16);
    REQUIRE(matmul_precision() == MatmulPrecision::BFloat16);
  }
  REQUIRE(matmul_precision() == MatmulPrecision::Float32);
}

TEST_CASE("bf16 products equal the float64 product of the rounded operands, on every layout", "[matmul_precision]") {
  const auto [m, k, n] = GENERATE(std::tuple{128, 160, 112}, std::tuple{72, 200, 150});
  const bool transpose_a = GENERATE(false, true), transpose_b = GENERATE(false, true);
  const bool strided_out = GENERATE(false, true);
  const auto [alpha, beta] = GENERATE(std::tuple{1.0, 0.0}, std::tuple{2.0, 0.5}, std::tuple{1.0, 1.0});
  CAPTURE(m, k, n, transpose_a, transpose_b, strided_out, alpha, beta);
  // Operands laid out transposed in memory when asked; values stay m×k and k×n.
  const Tensor a = transpose_a ? random_tensor({k, m}, DType::Float32, 1).transpose(0, 1)
                               : random_tensor({m, k}, DType::Float32, 1);
  const Tensor b = transpose_b ? random_tensor({n, k}, DType::Float32, 2).transpose(0, 1)
                               : random_tensor({k, n}, DType::Float32, 2);
  const Tensor storage = random_tensor({m, n + 7}, DType::Float32, 3);
  Tensor out = strided_out ? storage.narrow(1, 0, n) : storage.narrow(1, 0, n).contiguous();
  if (beta == 0.0) out.fill_(std::numeric_limits<double>::quiet_NaN());  // beta 0 must not read out
  const std::vector<double> before = out.to_vector();
  const std::vector<double> expected = reference(rounded_values(a), rounded_values(b), before, m, k, n, alpha, beta);
  {
    ScopedMatmulPrecision bf16(MatmulPrecision::BFloat16);
    ops::matmul_into(a, b, out, alpha, beta);
  }
  // Products of bf16 values are exact in float32; what remains is float32 summation error.
  REQUIRE(max_abs_diff(out.to_vector(), expected) <= 2e-5 * k);
  // And the rounding really happened: the exact float32 product differs by far more.
  const std::vector<double> exact = reference(a.to_vector(), b.to_vector(), before, m, k, n, alpha, beta);
  REQUIRE(max_abs_diff(out.to_vector(), exact) > 1e-3);
}

TEST_CASE("float32 products are not rounded, and beta 0 never reads out", "[matmul_precision]") {
  const int64_t m = 200, k = 130, n = 90;
  const Tensor a = random_tensor({m, k}, DType::Float32, 4), b = random_tensor({n, k}, DType::Float32, 5).transpose(0, 1);
  const Tensor out = full({m, n}, std::numeric_limits<double>::quiet_NaN(), DType::Float32);
  ops::matmul_into(a, b, out, 1.0, 0.0);
  const std::vector<double> exact = reference(a.to_vector(), b.to_vector(), out.to_vector(), m, k, n, 1.0, 0.0);
  REQUIRE(max_abs_diff(out.to_vector(), exact) <= 1e-4);
}

TEST_CASE("small products stay float32 under BFloat16 (one decoding step's rows)", "[matmul_precision]") {
  const Tensor a = random_tensor({5, 512}, DType::Float32, 6), b = random_tensor({512, 512}, DType::Float32, 7);
  ScopedMatmulPrecision bf16(MatmulPrecision::BFloat16);
  const Tensor out = ops::matmul(a, b);
  const std::vector<double> exact = reference(a.to_vector(), b.to_vector(), {}, 5, 512, 512, 1.0, 0.0);
  REQUIRE(max_abs_diff(out.to_vector(), exact) <= 1e-4);
}
