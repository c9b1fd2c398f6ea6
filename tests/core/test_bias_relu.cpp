// Fused bias + ReLU and its backward (core/cpu/bias_relu.cpp, core/ops_nn.cpp) against plain
// float64 loops: y = relu(y + b) in place, dz = y > 0 ? dy : 0 and db = Σ_rows dz, on small
// and large (parallel) tensors, the same at 1 and 2 threads; bad inputs are named.
#include <catch.hpp>

#include "core/ops.hpp"
#include "core/threads.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Contains;

namespace {

std::vector<double> reference_bias_relu(const std::vector<double>& y, const std::vector<double>& b, int64_t cols) {
  std::vector<double> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const double v = y[i] + (b.empty() ? 0.0 : b[i % size_t(cols)]);
    out[i] = v > 0 ? v : 0.0;
  }
  return out;
}

struct ReferenceGrads {
  std::vector<double> dz, db;
};

ReferenceGrads reference_backward(const std::vector<double>& y, const std::vector<double>& dy, int64_t cols) {
  ReferenceGrads r{std::vector<double>(y.size()), std::vector<double>(size_t(cols), 0.0)};
  for (size_t i = 0; i < y.size(); ++i) {
    r.dz[i] = y[i] > 0 ? dy[i] : 0.0;
    r.db[i % size_t(cols)] += r.dz[i];
  }
  return r;
}

}  // namespace

TEST_CASE("bias_relu_ is relu(y + b) in place, with and without a bias") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const Shape& shape : {Shape{5, 7}, Shape{3, 4, 9}, Shape{200, 300}}) {
      const int64_t cols = shape[shape.size() - 1];
      const Tensor y = random_tensor(shape, dtype, 1), b = random_tensor({cols}, dtype, 2);
      const std::vector<double> before = y.to_vector();
      ops::bias_relu_(y, b);
      check_all_close(y.to_vector(), reference_bias_relu(before, b.to_vector(), cols), tolerance_for(dtype));
      const Tensor plain = random_tensor(shape, dtype, 3);
      const std::vector<double> plain_before = plain.to_vector();
      ops::bias_relu_(plain, Tensor());
      check_all_close(plain.to_vector(), reference_bias_relu(plain_before, {}, cols), tolerance_for(dtype));
    }
  }
}

TEST_CASE("bias_relu_backward masks by the output and sums the bias gradient in the same pass") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const Shape& shape : {Shape{5, 7}, Shape{2, 3, 9}, Shape{700, 130}}) {
      const int64_t cols = shape[shape.size() - 1];
      const Tensor y = random_tensor(shape, dtype, 4);
      ops::bias_relu_(y, Tensor());  // a real ReLU output: zeros where the pre-activation was <= 0
      for (int layout : {0, 1}) {    // contiguous and transposed dy
        const Tensor dy = random_tensor(shape, dtype, 5, layout);
        const ReferenceGrads expected = reference_backward(y.to_vector(), dy.to_vector(), cols);
        const ops::BiasReluGrads g = ops::bias_relu_backward(y, dy, true);
        REQUIRE(g.dbias.shape() == Shape{cols});
        check_all_close(g.dz.to_vector(), expected.dz, tolerance_for(dtype));
        check_all_close(g.dbias.to_vector(), expected.db, dtype == DType::Float64 ? 1e-12 : 1e-5);
        CHECK_FALSE(ops::bias_relu_backward(y, dy, false).dbias.defined());
      }
    }
  }
}

TEST_CASE("bias_relu_backward gives the same bits at 1 and 2 threads") {
  const Tensor y = random_tensor({1000, 256}, DType::Float32, 6), dy = random_tensor({1000, 256}, DType::Float32, 7);
  ops::bias_relu_(y, Tensor());
  set_num_threads(1);
  const ops::BiasReluGrads one = ops::bias_relu_backward(y, dy, true);
  set_num_threads(2);
  const ops::BiasReluGrads two = ops::bias_relu_backward(y, dy, true);
  CHECK(two.dz.to_vector() == one.dz.to_vector());
  CHECK(two.dbias.to_vector() == one.dbias.to_vector());
}

TEST_CASE("bias_relu_ names a wrong bias, dtype or layout") {
  const Tensor y = zeros({4, 6});
  CHECK_THROWS_WITH(ops::bias_relu_(y, zeros({5})), Contains("[5]") && Contains("[6]"));
  CHECK_THROWS_WITH(ops::bias_relu_(y, zeros({6}, DType::Float64)), Contains("float64"));
  CHECK_THROWS_WITH(ops::bias_relu_(y.transpose(0, 1), zeros({4})), Contains("contiguous"));
  CHECK_THROWS_WITH(ops::bias_relu_(zeros({4, 6}, DType::Int64), Tensor()), Contains("int64"));
  CHECK_THROWS_WITH(ops::bias_relu_backward(y, zeros({4, 5}), true), Contains("[4, 5]"));
}
