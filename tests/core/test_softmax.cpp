// ops::softmax / log_softmax / softmax_backward (core/ops_nn.cpp, core/cpu/softmax.cpp)
// against float64 reference loops and finite differences.
#include <catch.hpp>

#include <cmath>
#include <limits>

#include "core/ops.hpp"
#include "kernel_test_data.hpp"

using namespace attn;
using attn::test::random_tensor;
using attn::test::require_close;
using attn::test::tolerance_for;

namespace {

// Reference (log-)softmax of a 3-D tensor along `dim`, in float64, in row-major order.
std::vector<double> reference_softmax(const Tensor& x, int dim, bool log) {
  const Shape s = x.shape();
  std::vector<double> out(size_t(s.numel()));
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < s[2]; ++k) {
        auto element = [&](int64_t t) {
          int64_t idx[3] = {i, j, k};
          idx[dim] = t;
          return x.at({idx[0], idx[1], idx[2]});
        };
        double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
        for (int64_t t = 0; t < s[dim]; ++t) max = std::max(max, element(t));
        for (int64_t t = 0; t < s[dim]; ++t) sum += std::exp(element(t) - max);
        const double v = x.at({i, j, k}) - max;
        out[size_t((i * s[1] + j) * s[2] + k)] = log ? v - std::log(sum) : std::exp(v) / sum;
      }
  return out;
}

// sum(f(x) * g) for the float64 softmax family: the scalar whose gradient the backward gives.
double weighted_output(const Tensor& x, const std::vector<double>& g, int dim, bool log) {
  const std::vector<double> y = (log ? ops::log_softmax(x, dim) : ops::softmax(x, dim)).to_vector();
  double total = 0.0;
  for (size_t i = 0; i < y.size(); ++i) total += y[i] * g[i];
  return total;
}

}  // namespace

TEST_CASE("softmax and log_softmax match the float64 reference along every dim", "[softmax]") {
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  const bool log = GENERATE(false, true);
  const int dim = GENERATE(0, 1, 2);
  const Tensor x = random_tensor({3, 5, 7}, dtype, 1, -4.0, 4.0);
  const Tensor y = log ? ops::log_softmax(x, dim) : ops::softmax(x, dim);
  REQUIRE(y.shape() == x.shape());
  require_close(y, reference_softmax(x, dim, log), tolerance_for(dtype, 5e-6));
  // Negative dims count from the end; non-contiguous input gives the same numbers.
  const Tensor y_neg = log ? ops::log_softmax(x, dim - 3) : ops::softmax(x, dim - 3);
  require_close(y_neg, y.to_vector(), 0.0);
  const Tensor x_t = x.transpose(0, 2).contiguous().transpose(0, 2);
  require_close(log ? ops::log_softmax(x_t, dim) : ops::softmax(x_t, dim), y.to_vector(), 0.0);
}

TEST_CASE("softmax is stable for large logits and gives 0 for -inf entries", "[softmax]") {
  const Tensor x = from_doubles({1000.0, 1001.0, -std::numeric_limits<double>::infinity(), 999.0}, {1, 4}, DType::Float32);
  const double z = 1.0 + std::exp(-1.0) + std::exp(-2.0);  // around the max 1001
  require_close(ops::softmax(x, -1), {std::exp(-1.0) / z, 1.0 / z, 0.0, std::exp(-2.0) / z}, 1e-6);
  const std::vector<double> logp = ops::log_softmax(x, -1).to_vector();
  CHECK(logp[1] == Approx(-std::log(z)).margin(1e-5));
  CHECK(std::isinf(logp[2]));

  // -inf inside the vectorised part of a long row (masked attention keys) gives exactly 0:
  // Eigen's vectorised exp alone returns a denormal there.
  std::vector<double> row(64);
  for (size_t j = 0; j < row.size(); ++j) row[j] = j % 3 == 0 ? -std::numeric_limits<double>::infinity() : 0.01 * double(j);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor masked = from_doubles(row, {1, 64}, dtype);
    const std::vector<double> p = ops::softmax(masked, -1).to_vector();
    for (size_t j = 0; j < row.size(); j += 3) CHECK(p[j] == 0.0);
  }
}

TEST_CASE("softmax_backward matches finite differences in float64", "[softmax]") {
  const bool log = GENERATE(false, true);
  const int dim = GENERATE(0, 2);
  const Tensor x = random_tensor({2, 3, 6}, DType::Float64, 2, -2.0, 2.0);
  const Tensor g = random_tensor(x.shape(), DType::Float64, 3);
  const std::vector<double> gv = g.to_vector();
  const Tensor y = log ? ops::log_softmax(x, dim) : ops::softmax(x, dim);
  const std::vector<double> dx = ops::softmax_backward(y, g, dim, log).to_vector();
  const std::vector<double> xv = x.to_vector();
  const double h = 1e-6;
  for (size_t i = 0; i < xv.size(); ++i) {
    std::vector<double> plus = xv, minus = xv;
    plus[i] += h;
    minus[i] -= h;
    const double numeric = (weighted_output(from_doubles(plus, x.shape(), DType::Float64), gv, dim, log) -
                            weighted_output(from_doubles(minus, x.shape(), DType::Float64), gv, dim, log)) /
                           (2 * h);
    INFO("element " << i);
    CHECK(dx[i] == Approx(numeric).margin(1e-8));
  }
}

TEST_CASE("softmax_backward in float32 agrees with float64", "[softmax]") {
  const bool log = GENERATE(false, true);
  const Tensor x = random_tensor({17, 300}, DType::Float64, 4, -3.0, 3.0), g = random_tensor(x.shape(), DType::Float64, 5);
  const Tensor y = log ? ops::log_softmax(x, 1) : ops::softmax(x, 1);
  const std::vector<double> expected = ops::softmax_backward(y, g, 1, log).to_vector();
  const Tensor y32 = log ? ops::log_softmax(x.to(DType::Float32), 1) : ops::softmax(x.to(DType::Float32), 1);
  require_close(ops::softmax_backward(y32, g.to(DType::Float32), 1, log), expected, 2e-5);
}

TEST_CASE("softmax handles 0-d and empty tensors", "[softmax]") {
  CHECK(ops::softmax(scalar_tensor(3.0), 0).item() == 1.0);
  CHECK(ops::log_softmax(scalar_tensor(3.0), -1).item() == 0.0);
  CHECK(ops::softmax(Tensor({0, 5}), 1).shape() == Shape{0, 5});
  CHECK(ops::softmax(Tensor({4, 0}), 1).shape() == Shape{4, 0});
}

TEST_CASE("softmax rejects integer inputs, bad dims and mismatched gradients", "[softmax]") {
  const Tensor x = random_tensor({2, 3}, DType::Float32, 6);
  CHECK_THROWS_WITH(ops::softmax(x.to(DType::Int64), 0), Catch::Contains("int64"));
  CHECK_THROWS_WITH(ops::softmax(x, 2), Catch::Contains("dim 2"));
  CHECK_THROWS_WITH(ops::softmax_backward(x, Tensor({3, 2}), 1, false),
                    Catch::Contains("[3, 2]") && Catch::Contains("[2, 3]"));
}
