// ops::matmul / ops::matmul_into (core/ops_matmul.cpp) and the CPU GEMM (core/cpu/matmul.cpp)
// against a float64 triple loop, on strided, transposed and broadcast operands.
#include <catch.hpp>

#include <functional>
#include <string>
#include <tuple>

#include "core/allocator.hpp"
#include "core/ops.hpp"
#include "kernel_test_data.hpp"

using namespace attn;
using attn::test::random_tensor;
using attn::test::require_close;
using attn::test::tolerance_for;

namespace {

// Plain float64 product of two 2-D tensors read element by element (any strides).
std::vector<double> reference_product(const Tensor& a, const Tensor& b) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  std::vector<double> out(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) out[size_t(i * n + j)] += a.at({i, p}) * b.at({p, j});
  return out;
}

// The reference of a batched product: a and b already expanded to the same batch dims.
std::vector<double> reference_batched(const Tensor& a, const Tensor& b) {
  if (a.dim() == 2) return reference_product(a, b);
  std::vector<double> out;
  for (int64_t i = 0; i < a.size(0); ++i) {
    std::vector<double> part = reference_batched(a.select(0, i), b.select(0, i));
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

// t's batch dims expanded to those of `out_shape` (its last two dims kept).
Tensor expand_batch(const Tensor& t, const Shape& out_shape) {
  Shape shape = out_shape;
  shape[shape.size() - 2] = t.size(-2);
  shape[shape.size() - 1] = t.size(-1);
  return t.expand(shape);
}

uint64_t allocations() { return allocator_for(Device::cpu()).stats().num_allocs; }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("matmul of 2-D operands matches the float64 triple loop", "[matmul]") {
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  const auto [m, k, n] = GENERATE(std::tuple{1, 1, 1}, std::tuple{1, 7, 5}, std::tuple{6, 1, 3}, std::tuple{4, 9, 1},
                                  std::tuple{33, 65, 17}, std::tuple{128, 96, 130});
  const Tensor a = random_tensor({m, k}, dtype, 1), b = random_tensor({k, n}, dtype, 2);
  const Tensor c = ops::matmul(a, b);
  REQUIRE(c.shape() == Shape{m, n});
  REQUIRE(c.dtype() == dtype);
  require_close(c, reference_product(a, b), tolerance_for(dtype, 1e-4));
}

TEST_CASE("transposed and row-strided operands go to BLAS without a copy", "[matmul]") {
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  const Tensor a_t = random_tensor({40, 30}, dtype, 3).transpose(0, 1);           // [30, 40], column-major
  const Tensor b_t = random_tensor({20, 40}, dtype, 4).transpose(0, 1);           // [40, 20], column-major
  const Tensor b_narrow = random_tensor({40, 50}, dtype, 5).narrow(1, 10, 20);    // [40, 20], ld 50
  for (const Tensor& b : {b_t, b_narrow}) {
    const uint64_t before = allocations();
    const Tensor c = ops::matmul(a_t, b);
    CHECK(allocations() - before == 1);  // the output only
    require_close(c, reference_product(a_t, b), tolerance_for(dtype, 1e-4));
  }
}

TEST_CASE("operands that are neither row- nor column-major are copied once and still correct", "[matmul]") {
  const Tensor a = random_tensor({12, 20}, DType::Float64, 6).slice(1, 0, 20, 2);  // [12, 10], column stride 2
  const Tensor b = random_tensor({10, 1}, DType::Float64, 7).expand({10, 8});       // broadcast columns
  require_close(ops::matmul(a, b), reference_product(a, b), 1e-12);
}

TEST_CASE("batch dims broadcast as in NumPy", "[matmul]") {
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  struct Case {
    Shape a, b, out;
  };
  const Case c = GENERATE(Case{{3, 4}, {2, 4, 5}, {2, 3, 5}}, Case{{2, 3, 4}, {4, 5}, {2, 3, 5}},
                          Case{{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}}, Case{{2, 3, 6, 4}, {1, 3, 4, 7}, {2, 3, 6, 7}},
                          Case{{16, 8, 8}, {16, 8, 8}, {16, 8, 8}});
  const Tensor a = random_tensor(c.a, dtype, 8), b = random_tensor(c.b, dtype, 9);
  const Tensor out = ops::matmul(a, b);
  REQUIRE(out.shape() == c.out);
  require_close(out, reference_batched(expand_batch(a, c.out), expand_batch(b, c.out)), tolerance_for(dtype, 1e-5));
}

TEST_CASE("1-D operands follow NumPy: row vector on the left, column vector on the right", "[matmul]") {
  const Tensor v = random_tensor({4}, DType::Float64, 10), w = random_tensor({4}, DType::Float64, 11);
  const Tensor m = random_tensor({4, 3}, DType::Float64, 12), mt = random_tensor({3, 4}, DType::Float64, 13);
  const Tensor batch = random_tensor({2, 4, 3}, DType::Float64, 14);

  const Tensor dot = ops::matmul(v, w);
  REQUIRE(dot.dim() == 0);
  REQUIRE(dot.item() == Approx(reference_product(v.unsqueeze(0), w.unsqueeze(1))[0]).margin(1e-12));

  const Tensor vm = ops::matmul(v, m);
  REQUIRE(vm.shape() == Shape{3});
  require_close(vm, reference_product(v.unsqueeze(0), m), 1e-12);

  const Tensor mv = ops::matmul(mt, v);
  REQUIRE(mv.shape() == Shape{3});
  require_close(mv, reference_product(mt, v.unsqueeze(1)), 1e-12);

  const Tensor vb = ops::matmul(v, batch);
  REQUIRE(vb.shape() == Shape{2, 3});
  require_close(vb, reference_batched(v.unsqueeze(0).expand({2, 1, 4}), batch), 1e-12);
}

TEST_CASE("matmul_into accumulates alpha * a @ b + beta * out", "[matmul]") {
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  const Tensor a = random_tensor({2, 5, 6}, dtype, 15);
  const Tensor b = random_tensor({3, 6}, dtype, 16).transpose(0, 1);  // [6, 3], column-major, shared by the batch
  const Tensor out = random_tensor({2, 5, 3}, dtype, 17);
  const std::vector<double> before = out.to_vector();
  const std::vector<double> product = reference_batched(a, b.expand({2, 6, 3}));
  ops::matmul_into(a, b, out, 2.0, 0.5);
  std::vector<double> expected(before.size());
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = 2.0 * product[i] + 0.5 * before[i];
  require_close(out, expected, tolerance_for(dtype, 1e-5));
}

TEST_CASE("a few rows (a decoding step's 9-47, computed in blocks of 8) accumulate into a strided out", "[matmul]") {
  const Tensor a = random_tensor({300, 29}, DType::Float32, 18).transpose(0, 1).narrow(1, 0, 290);  // [29, 290], column-major
  const Tensor b = random_tensor({150, 290}, DType::Float32, 19).transpose(0, 1);  // [290, 150]
  const Tensor wide = random_tensor({29, 160}, DType::Float32, 20), out = wide.narrow(1, 5, 150);
  const std::vector<double> before = out.to_vector(), product = reference_product(a, b);
  ops::matmul_into(a, b, out, -1.5, 0.25);
  std::vector<double> expected(before.size());
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = -1.5 * product[i] + 0.25 * before[i];
  require_close(out, expected, tolerance_for(DType::Float32, 1e-4));
  require_close(ops::matmul(a.contiguous(), b), product, tolerance_for(DType::Float32, 1e-4));
}

TEST_CASE("empty dimensions give empty or zero products", "[matmul]") {
  const Tensor zero_k = ops::matmul(random_tensor({3, 0}, DType::Float32, 18), random_tensor({0, 2}, DType::Float32, 19));
  REQUIRE(zero_k.shape() == Shape{3, 2});
  require_close(zero_k, std::vector<double>(6, 0.0), 0.0);
  REQUIRE(ops::matmul(random_tensor({0, 4}, DType::Float32, 20), random_tensor({4, 2}, DType::Float32, 21)).shape() ==
          Shape{0, 2});
}

TEST_CASE("bad matmul operands give errors naming both shapes or dtypes", "[matmul]") {
  const Tensor a = random_tensor({2, 3}, DType::Float32, 22), b = random_tensor({4, 5}, DType::Float32, 23);
  std::string message = error_of([&] { ops::matmul(a, b); });
  CHECK_THAT(message, Catch::Contains("[2, 3]") && Catch::Contains("[4, 5]"));

  message = error_of([&] { ops::matmul(random_tensor({2, 3, 4}, DType::Float32, 24), random_tensor({3, 4, 5}, DType::Float32, 25)); });
  CHECK_THAT(message, Catch::Contains("[2, 3, 4]") && Catch::Contains("[3, 4, 5]"));

  message = error_of([&] { ops::matmul(a, random_tensor({3, 2}, DType::Float64, 26)); });
  CHECK_THAT(message, Catch::Contains("float32") && Catch::Contains("float64"));

  CHECK_THAT(error_of([&] { ops::matmul(scalar_tensor(1.0), a); }), Catch::Contains("at least 1 dim"));
  CHECK_THAT(error_of([&] { ops::matmul(a.to(DType::Int64), a.to(DType::Int64).transpose(0, 1)); }),
             Catch::Contains("int64"));

  const Tensor wrong_out = Tensor({2, 4}, DType::Float32);
  CHECK_THAT(error_of([&] { ops::matmul_into(a, random_tensor({3, 5}, DType::Float32, 27), wrong_out); }),
             Catch::Contains("[2, 5]") && Catch::Contains("[2, 4]"));
  const Tensor square = random_tensor({3, 3}, DType::Float32, 28);
  CHECK_THAT(error_of([&] { ops::matmul_into(square, square.clone(), square); }), Catch::Contains("overlap"));
}

TEST_CASE("heads split out of [B, T, H, d] are one 4-D batch, written into a head-interleaved out", "[matmul]") {
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  const int64_t batch = 3, length = 5, heads = 4, width = 6;
  auto split_heads = [&](const Tensor& t) { return t.view({batch, length, heads, width}).permute({0, 2, 1, 3}); };
  const Tensor q = split_heads(random_tensor({batch, length, heads * width}, dtype, 29));  // [B, H, T, d], strided
  const Tensor k = split_heads(random_tensor({batch, length, heads * width}, dtype, 30));
  const Tensor scores = ops::matmul(q, k.transpose(-2, -1));
  REQUIRE(scores.shape() == Shape{batch, heads, length, length});
  require_close(scores, reference_batched(q, k.transpose(-2, -1)), tolerance_for(dtype, 1e-5));

  // out laid out as [B, T, H, d] and viewed as [B, H, T, d]: rows of stride H·d.
  const Tensor out = Tensor({batch, length, heads, width}, dtype).permute({0, 2, 1, 3});
  ops::matmul_into(scores, k, out);
  require_close(out, reference_batched(scores, k), tolerance_for(dtype, 1e-4));
}

TEST_CASE("matmul_into rejects an out whose matrices overlap or have strided columns", "[matmul]") {
  const Tensor a = random_tensor({2, 3, 4}, DType::Float32, 31), b = random_tensor({2, 4, 5}, DType::Float32, 32);
  const Tensor broadcast_out = Tensor({1, 3, 5}, DType::Float32).expand({2, 3, 5});
  CHECK_THAT(error_of([&] { ops::matmul_into(a, b, broadcast_out); }), Catch::Contains("non-overlapping"));
  const Tensor column_major_out = Tensor({2, 5, 3}, DType::Float32).transpose(1, 2);
  CHECK_THAT(error_of([&] { ops::matmul_into(a, b, column_major_out); }), Catch::Contains("unit column stride"));
}
