// Element-wise kernels and ops (core/cpu/elementwise.cpp, core/ops_elementwise.cpp) against
// float64 reference loops, on contiguous, transposed, sliced and broadcast operands.
#include <catch.hpp>

#include <cmath>
#include <functional>

#include "core/ops.hpp"
#include "core/threads.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Contains;

namespace {

struct UnaryCase {
  UnaryOp op;
  UnaryParams params;
  double low, high;  // input domain
  std::function<double(double)> reference;
};

double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

std::vector<UnaryCase> unary_cases() {
  return {
      {UnaryOp::Neg, {}, -3, 3, [](double x) { return -x; }},
      {UnaryOp::Abs, {}, -3, 3, [](double x) { return std::fabs(x); }},
      {UnaryOp::Exp, {}, -3, 3, [](double x) { return std::exp(x); }},
      {UnaryOp::Log, {}, 0.1, 5, [](double x) { return std::log(x); }},
      {UnaryOp::Sqrt, {}, 0.1, 5, [](double x) { return std::sqrt(x); }},
      {UnaryOp::Rsqrt, {}, 0.1, 5, [](double x) { return 1 / std::sqrt(x); }},
      {UnaryOp::Relu, {}, -3, 3, [](double x) { return x > 0 ? x : 0; }},
      {UnaryOp::Elu, {0.7}, -3, 3, [](double x) { return x > 0 ? x : 0.7 * (std::exp(x) - 1); }},
      {UnaryOp::Gelu, {}, -4, 4, gelu_ref},
      {UnaryOp::Sigmoid, {}, -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {UnaryOp::Tanh, {}, -3, 3, [](double x) { return std::tanh(x); }},
      {UnaryOp::Sin, {}, -3, 3, [](double x) { return std::sin(x); }},
      {UnaryOp::Cos, {}, -3, 3, [](double x) { return std::cos(x); }},
      {UnaryOp::Pow, {2.5}, 0.1, 3, [](double x) { return std::pow(x, 2.5); }},
      {UnaryOp::Pow, {2.0}, -3, 3, [](double x) { return x * x; }},
      {UnaryOp::Clamp, {-0.5, 1.0}, -3, 3, [](double x) { return std::min(std::max(x, -0.5), 1.0); }},
      {UnaryOp::Reciprocal, {}, 0.5, 3, [](double x) { return 1 / x; }},
      {UnaryOp::Square, {}, -3, 3, [](double x) { return x * x; }},
      {UnaryOp::AddScalar, {1.25}, -3, 3, [](double x) { return x + 1.25; }},
      {UnaryOp::MulScalar, {-3}, -3, 3, [](double x) { return -3 * x; }},
      {UnaryOp::RSubScalar, {2}, -3, 3, [](double x) { return 2 - x; }},
      {UnaryOp::RDivScalar, {2}, 0.5, 3, [](double x) { return 2 / x; }},
  };
}

double binary_ref(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Maximum: return std::max(a, b);
    case BinaryOp::Minimum: return std::min(a, b);
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
  }
  return 0;
}

const std::vector<BinaryOp> kBinaryOps = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                                          BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::Eq, BinaryOp::Ne,
                                          BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge};

// Rounds values to multiples of 0.5 so that comparisons see equal elements too.
Tensor coarse(const Tensor& t) { return ops::div(ops::unary(UnaryOp::MulScalar, t, {2}).to(DType::Int64).to(t.dtype()), 2.0); }

}  // namespace

TEST_CASE("unary ops match float64 references on strided inputs") {
  for (DType dtype : {DType::Float64, DType::Float32})
    for (int layout : {0, 1, 2})
      for (const UnaryCase& c : unary_cases()) {
        const Shape shape = layout == 0 ? Shape{37} : Shape{5, 7};
        Tensor x = random_tensor(shape, dtype, 11 + layout, layout, c.low, c.high);
        Tensor y = ops::unary(c.op, x, c.params);
        CHECK(y.dtype() == dtype);
        CHECK(y.shape() == shape);
        std::vector<double> expected;
        for (double v : x.to_vector()) expected.push_back(c.reference(v));
        INFO("op " << int(c.op) << " dtype " << dtype_name(dtype) << " layout " << layout);
        check_all_close(y.to_vector(), expected, 4 * tolerance_for(dtype));
      }
}

TEST_CASE("vectorized unary ops keep libm's results at extreme inputs") {
  const std::vector<double> inputs = {-1000, -100, -30, -1e-8, 0, 1e-8, 30, 100, 1000, INFINITY, -INFINITY};
  for (DType dtype : {DType::Float32, DType::Float64})
    for (const UnaryCase& c : unary_cases()) {
      if (c.op == UnaryOp::Pow || c.op == UnaryOp::Rsqrt || c.op == UnaryOp::Sin || c.op == UnaryOp::Cos) continue;
      Tensor x = from_doubles(inputs, {int64_t(inputs.size())}, dtype);
      std::vector<double> expected;
      for (double v : x.to_vector()) expected.push_back(dtype == DType::Float32 ? double(float(c.reference(v))) : c.reference(v));
      INFO("op " << int(c.op) << " " << dtype_name(dtype));
      check_all_close(ops::unary(c.op, x, c.params).to_vector(), expected, 4 * tolerance_for(dtype));
    }
}

TEST_CASE("exp of -inf is exactly 0 in the vectorised path too") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor x = full({64}, -INFINITY, dtype);
    for (double v : ops::unary(UnaryOp::Exp, x, {}).to_vector()) CHECK(v == 0.0);
  }
}

TEST_CASE("unary ops on a large tensor take the parallel path and agree") {
  set_num_threads(2);
  Tensor x = random_tensor({400, 300}, DType::Float32, 5, 1);
  std::vector<double> expected;
  for (double v : x.to_vector()) expected.push_back(std::tanh(v));
  check_all_close(ops::tanh(x).to_vector(), expected, 4e-6);
}

TEST_CASE("integer unary ops and dtype errors") {
  Tensor i = from_vector<int64_t>({-3, 0, 4}, {3});
  CHECK(ops::neg(i).to_vector() == std::vector<double>{3, 0, -4});
  CHECK(ops::abs(i).to_vector() == std::vector<double>{3, 0, 4});
  CHECK(ops::clamp(i, -1, 2).to_vector() == std::vector<double>{-1, 0, 2});
  REQUIRE_THROWS_WITH(ops::exp(i), Contains("exp") && Contains("int64") && Contains("[3]"));
  REQUIRE_THROWS_WITH(ops::clamp(i, 2, 1), Contains("low 2 > high 1"));
}

TEST_CASE("unary_backward matches central finite differences (float64)") {
  const double h = 1e-6;
  for (const UnaryCase& c : unary_cases()) {
    Tensor x = random_tensor({4, 6}, DType::Float64, 21, 1, c.low + 0.01, c.high - 0.01);
    Tensor dy = random_tensor({4, 6}, DType::Float64, 22);
    Tensor dx = ops::unary_backward(c.op, x, ops::unary(c.op, x, c.params), dy, c.params);
    Tensor dx_without_y = ops::unary_backward(c.op, x, Tensor(), dy, c.params);
    std::vector<double> xs = x.to_vector(), g = dy.to_vector(), expected;
    for (size_t k = 0; k < xs.size(); ++k) {
      // The analytic derivative is compared against the kernel's own forward.
      Tensor plus = ops::unary(c.op, from_doubles({xs[k] + h}, {1}, DType::Float64), c.params);
      Tensor minus = ops::unary(c.op, from_doubles({xs[k] - h}, {1}, DType::Float64), c.params);
      expected.push_back(g[k] * (plus.item() - minus.item()) / (2 * h));
    }
    INFO("op " << int(c.op));
    check_all_close(dx.to_vector(), expected, 1e-6);
    check_all_close(dx_without_y.to_vector(), dx.to_vector(), 0);
  }
}

TEST_CASE("binary ops broadcast like NumPy on strided operands") {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 1, 5}, {4, 1}}, {{2, 3}, {3}}, {{1}, {2, 2}}, {{0, 3}, {3}}, {{}, {2, 3}}, {{6, 4}, {6, 4}}, {{2, 1}, {1, 7}}};
  for (DType dtype : {DType::Float64, DType::Float32})
    for (const auto& [sa, sb] : shapes)
      for (int layout : {0, 1, 2}) {
        Tensor a = coarse(random_tensor(sa, dtype, 31, layout));
        Tensor b = random_tensor(sb, dtype, 32, 2 - layout);
        if (layout == 0) b = coarse(b);  // equal elements exercise ==, <=, >=
        const Shape out_shape = broadcast_shapes(sa, sb);
        const std::vector<double> av = values_as(a, out_shape), bv = values_as(b, out_shape);
        for (BinaryOp op : kBinaryOps) {
          Tensor out = ops::binary(op, a, b);
          CHECK(out.shape() == out_shape);
          CHECK(out.dtype() == (is_comparison(op) ? DType::Bool : dtype));
          std::vector<double> expected;
          for (size_t k = 0; k < av.size(); ++k) expected.push_back(binary_ref(op, av[k], bv[k]));
          INFO("op " << int(op) << " shapes " << sa.str() << " " << sb.str() << " layout " << layout);
          check_all_close(out.to_vector(), expected, tolerance_for(dtype));
        }
      }
}

TEST_CASE("binary ops on large broadcast tensors (parallel path)") {
  Tensor a = random_tensor({300, 500}, DType::Float32, 41, 1);
  Tensor b = random_tensor({500}, DType::Float32, 42);
  Tensor out = ops::mul(a, b);
  const std::vector<double> av = a.to_vector(), bv = b.to_vector(), ov = out.to_vector();
  for (size_t k = 0; k < ov.size(); k += 997) CHECK(ov[k] == Approx(float(av[k]) * float(bv[k % 500])).epsilon(1e-6));
}

TEST_CASE("integer and bool binary ops") {
  Tensor a = from_vector<int32_t>({1, 5, -2}, {3});
  Tensor b = from_vector<int32_t>({4}, {1});
  CHECK(ops::add(a, b).to_vector() == std::vector<double>{5, 9, 2});
  CHECK(ops::maximum(a, b).to_vector() == std::vector<double>{4, 5, 4});
  CHECK(ops::lt(a, b).to_vector() == std::vector<double>{1, 0, 1});
  Tensor m = from_vector<bool>({true, false}, {2});
  CHECK(ops::ne(m, from_vector<bool>({true, true}, {2})).to_vector() == std::vector<double>{0, 1});
  REQUIRE_THROWS_WITH(ops::add(m, m), Contains("bool"));
}

TEST_CASE("binary ops name both shapes and both dtypes on mismatch") {
  REQUIRE_THROWS_WITH(ops::add(zeros({2, 3}), zeros({4})), Contains("[2, 3]") && Contains("[4]"));
  REQUIRE_THROWS_WITH(ops::mul(zeros({2}, DType::Float32), zeros({2}, DType::Float64)),
                      Contains("float32") && Contains("float64"));
}

TEST_CASE("scalar forms") {
  Tensor x = from_doubles({1, -2, 4}, {3}, DType::Float64);
  CHECK(ops::add(x, 1.5).to_vector() == std::vector<double>{2.5, -0.5, 5.5});
  CHECK(ops::sub(x, 1).to_vector() == std::vector<double>{0, -3, 3});
  CHECK(ops::mul(x, -2).to_vector() == std::vector<double>{-2, 4, -8});
  CHECK(ops::div(x, 4).to_vector() == std::vector<double>{0.25, -0.5, 1});
  CHECK(ops::rsub(1, x).to_vector() == std::vector<double>{0, 3, -3});
  CHECK(ops::rdiv(2, x).to_vector() == std::vector<double>{2, -1, 0.5});
  CHECK(ops::gt(x, 0).to_vector() == std::vector<double>{1, 0, 1});
  CHECK(ops::le(x, 1).to_vector() == std::vector<double>{1, 1, 0});
  CHECK(ops::eq(x, 4).to_vector() == std::vector<double>{0, 0, 1});
  CHECK(ops::ne(x, 4).to_vector() == std::vector<double>{1, 1, 0});
  CHECK(ops::lt(x, 1).to_vector() == std::vector<double>{0, 1, 0});
  CHECK(ops::ge(x, 1).to_vector() == std::vector<double>{1, 0, 1});
}

TEST_CASE("maximum and minimum propagate NaN") {
  Tensor a = from_doubles({NAN, 1}, {2}, DType::Float64), b = from_doubles({0, NAN}, {2}, DType::Float64);
  for (const Tensor& r : {ops::maximum(a, b), ops::minimum(a, b)})
    for (double v : r.to_vector()) CHECK(std::isnan(v));
}

TEST_CASE("where and masked_fill broadcast condition and values") {
  for (DType dtype : {DType::Float64, DType::Float32}) {
    Tensor cond = ops::gt(random_tensor({3, 1}, DType::Float64, 51), 0);
    Tensor a = random_tensor({3, 4}, dtype, 52, 1);
    Tensor b = random_tensor({4}, dtype, 53);
    Tensor out = ops::where(cond, a, b);
    REQUIRE(out.shape() == Shape{3, 4});
    const std::vector<double> cv = values_as(cond, {3, 4}), av = a.to_vector(), bv = values_as(b, {3, 4});
    std::vector<double> expected;
    for (size_t k = 0; k < cv.size(); ++k) expected.push_back(cv[k] != 0 ? av[k] : bv[k]);
    check_all_close(out.to_vector(), expected, 0);

    Tensor filled = ops::masked_fill(a, cond, -1e9);
    for (size_t k = 0; k < cv.size(); ++k) expected[k] = cv[k] != 0 ? -1e9 : av[k];
    check_all_close(filled.to_vector(), expected, tolerance_for(dtype));
  }
  REQUIRE_THROWS_WITH(ops::where(zeros({2}), zeros({2}), zeros({2})), Contains("bool") && Contains("float32"));
  REQUIRE_THROWS_WITH(ops::masked_fill(zeros({2}), from_vector<bool>({1, 0, 1}, {3}), 0), Contains("[3]") && Contains("[2]"));
}

TEST_CASE("add_ accumulates a broadcast source into a strided destination") {
  Tensor base = zeros({4, 3}, DType::Float64);
  Tensor dst = base.transpose(0, 1);  // [3, 4]
  Tensor src = from_doubles({1, 2, 3}, {3, 1}, DType::Float64);
  ops::add_(dst, src);
  ops::add_(dst, src, 0.5);
  CHECK(dst.to_vector() == std::vector<double>{1.5, 1.5, 1.5, 1.5, 3, 3, 3, 3, 4.5, 4.5, 4.5, 4.5});
  ops::add_(base, base);  // aliasing source
  CHECK(base.at({0, 2}) == 9);
  REQUIRE_THROWS_WITH(ops::add_(zeros({2}), zeros({3})), Contains("[3]") && Contains("[2]"));
}
