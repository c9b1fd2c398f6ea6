// ops::layer_norm and its backward (core/ops_nn.cpp, core/cpu/layer_norm.cpp) against a
// float64 reference loop and finite differences.
#include <catch.hpp>

#include <cmath>

#include "core/ops.hpp"
#include "kernel_test_data.hpp"

using namespace attn;
using attn::test::random_tensor;
using attn::test::require_close;

namespace {

struct ReferenceLayerNorm {
  std::vector<double> out, mean, rstd;
};

// Row-wise layer norm of a [rows, D] tensor in float64; gamma/beta may be undefined.
ReferenceLayerNorm reference_layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  const int64_t rows = x.size(0), d = x.size(1);
  const std::vector<double> xv = x.to_vector();
  ReferenceLayerNorm r;
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < d; ++j) mean += xv[size_t(i * d + j)] / double(d);
    for (int64_t j = 0; j < d; ++j) var += std::pow(xv[size_t(i * d + j)] - mean, 2) / double(d);
    const double rstd = 1.0 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.rstd.push_back(rstd);
    for (int64_t j = 0; j < d; ++j) {
      const double g = gamma.defined() ? gamma.at({j}) : 1.0, b = beta.defined() ? beta.at({j}) : 0.0;
      r.out.push_back((xv[size_t(i * d + j)] - mean) * rstd * g + b);
    }
  }
  return r;
}

double weighted_output(const Tensor& x, const Tensor& gamma, const Tensor& beta, const std::vector<double>& w) {
  const std::vector<double> y = ops::layer_norm(x, gamma, beta, 1e-5).out.to_vector();
  double total = 0.0;
  for (size_t i = 0; i < y.size(); ++i) total += y[i] * w[i];
  return total;
}

// Central finite difference of weighted_output with respect to element i of `which`
// (0: x, 1: gamma, 2: beta).
double numeric_gradient(std::vector<Tensor> inputs, int which, size_t i, const std::vector<double>& w) {
  const double h = 1e-6;
  std::vector<double> v = inputs[which].to_vector();
  auto at = [&](double delta) {
    std::vector<double> shifted = v;
    shifted[i] += delta;
    inputs[which] = from_doubles(shifted, inputs[which].shape(), DType::Float64);
    return weighted_output(inputs[0], inputs[1], inputs[2], w);
  };
  return (at(h) - at(-h)) / (2 * h);
}

}  // namespace

TEST_CASE("layer_norm matches the float64 reference, with and without affine parameters", "[layer_norm]") {
  const DType dtype = GENERATE(DType::Float32, DType::Float64);
  const bool affine = GENERATE(true, false);
  const int64_t d = GENERATE(1, 7, 512);
  const Tensor x = random_tensor({9, d}, dtype, 1, -3.0, 3.0);
  const Tensor gamma = affine ? random_tensor({d}, dtype, 2) : Tensor(), beta = affine ? random_tensor({d}, dtype, 3) : Tensor();
  const ops::LayerNormResult r = ops::layer_norm(x, gamma, beta, 1e-5);
  const ReferenceLayerNorm expected = reference_layer_norm(x, gamma, beta, 1e-5);
  const double tol = dtype == DType::Float64 ? 1e-11 : 1e-5;
  REQUIRE(r.mean.shape() == Shape{9});
  require_close(r.out, expected.out, tol);
  require_close(r.mean, expected.mean, tol);
  const double rstd_scale = d == 1 ? 1.0 / std::sqrt(1e-5) : 1.0;  // d == 1: zero variance, rstd = 1/sqrt(eps)
  require_close(r.rstd, expected.rstd, tol * rstd_scale);
}

TEST_CASE("layer_norm statistics stay accurate for float32 rows with a large offset", "[layer_norm]") {
  // A float32 sum-of-squares formula loses every digit here; float64 accumulation does not.
  const Tensor x = random_tensor({4, 1000}, DType::Float32, 4, 999.0, 1001.0);
  const ops::LayerNormResult r = ops::layer_norm(x, Tensor(), Tensor(), 1e-5);
  const ReferenceLayerNorm expected = reference_layer_norm(x, Tensor(), Tensor(), 1e-5);
  require_close(r.out, expected.out, 2e-4);
}

TEST_CASE("layer_norm keeps the leading dims and normalises the last one", "[layer_norm]") {
  const Tensor x = random_tensor({2, 3, 5}, DType::Float64, 5);
  const ops::LayerNormResult r = ops::layer_norm(x.transpose(0, 1), Tensor(), Tensor(), 1e-5);
  REQUIRE(r.out.shape() == Shape{3, 2, 5});
  REQUIRE(r.mean.shape() == Shape{3, 2});
  const ReferenceLayerNorm expected =
      reference_layer_norm(x.transpose(0, 1).contiguous().reshape({6, 5}), Tensor(), Tensor(), 1e-5);
  require_close(r.out, expected.out, 1e-12);
}

TEST_CASE("layer_norm_backward matches finite differences in float64", "[layer_norm]") {
  const Tensor x = random_tensor({3, 6}, DType::Float64, 6, -2.0, 2.0);
  const Tensor gamma = random_tensor({6}, DType::Float64, 7), beta = random_tensor({6}, DType::Float64, 8);
  const Tensor w = random_tensor(x.shape(), DType::Float64, 9);
  const std::vector<double> wv = w.to_vector();
  const ops::LayerNormResult fwd = ops::layer_norm(x, gamma, beta, 1e-5);
  const ops::LayerNormGrads g = ops::layer_norm_backward(w, x, gamma, fwd.mean, fwd.rstd, true);
  const std::vector<Tensor> inputs{x, gamma, beta};
  const std::vector<Tensor> grads{g.dx, g.dgamma, g.dbeta};
  for (int which = 0; which < 3; ++which) {
    const std::vector<double> analytic = grads[which].to_vector();
    for (size_t i = 0; i < analytic.size(); ++i) {
      INFO("input " << which << " element " << i);
      CHECK(analytic[i] == Approx(numeric_gradient(inputs, which, i, wv)).margin(1e-7));
    }
  }
  const ops::LayerNormGrads no_affine = ops::layer_norm_backward(w, x, gamma, fwd.mean, fwd.rstd, false);
  CHECK_FALSE(no_affine.dgamma.defined());
  require_close(no_affine.dx, g.dx.to_vector(), 0.0);
}

TEST_CASE("layer_norm_backward in float32 agrees with float64 on a wide row", "[layer_norm]") {
  const Tensor x = random_tensor({40, 700}, DType::Float64, 10, -2.0, 2.0), dy = random_tensor(x.shape(), DType::Float64, 11);
  const Tensor gamma = random_tensor({700}, DType::Float64, 12);
  const ops::LayerNormResult f64 = ops::layer_norm(x, gamma, Tensor(), 1e-5);
  const ops::LayerNormGrads g64 = ops::layer_norm_backward(dy, x, gamma, f64.mean, f64.rstd, true);
  auto to32 = [](const Tensor& t) { return t.to(DType::Float32); };
  const ops::LayerNormResult f32 = ops::layer_norm(to32(x), to32(gamma), Tensor(), 1e-5);
  const ops::LayerNormGrads g32 = ops::layer_norm_backward(to32(dy), to32(x), to32(gamma), f32.mean, f32.rstd, true);
  require_close(g32.dx, g64.dx.to_vector(), 1e-4);
  require_close(g32.dgamma, g64.dgamma.to_vector(), 1e-4);
  require_close(g32.dbeta, g64.dbeta.to_vector(), 1e-4);
}

TEST_CASE("layer_norm of zero rows gives empty results", "[layer_norm]") {
  const ops::LayerNormResult r = ops::layer_norm(Tensor({0, 4}), Tensor(), Tensor(), 1e-5);
  CHECK(r.out.shape() == Shape{0, 4});
  CHECK(r.mean.shape() == Shape{0});
}

TEST_CASE("layer_norm rejects mismatched parameters with their shapes", "[layer_norm]") {
  const Tensor x = random_tensor({2, 4}, DType::Float32, 13);
  CHECK_THROWS_WITH(ops::layer_norm(x, Tensor({5}), Tensor(), 1e-5), Catch::Contains("[5]") && Catch::Contains("[4]"));
  CHECK_THROWS_WITH(ops::layer_norm(x, Tensor({4}, DType::Float64), Tensor(), 1e-5), Catch::Contains("float64"));
  CHECK_THROWS_WITH(ops::layer_norm(x.to(DType::Int32), Tensor(), Tensor(), 1e-5), Catch::Contains("int32"));
}
