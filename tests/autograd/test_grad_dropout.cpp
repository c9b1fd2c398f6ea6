// Gradient of inverted dropout (autograd/ops_dropout.cpp): the saved keep-mask routes the
// gradient scaled by 1/(1-p); evaluation mode and p = 0 are the identity. The fused
// dropout_add equals residual + dropout(x) in value and gradient.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

TEST_CASE("dropout: gradcheck with a fixed mask") {
  // A fresh generator per call: the same mask in every evaluation of f. The mask for a
  // seed depends on the dtype (float32 and float64 draw differently), so the float32 run
  // is checked against its own mask below instead of against float64.
  auto f = [](const std::vector<Tensor>& in) {
    Generator gen(7);
    return dropout(in[0], 0.4, true, &gen);
  };
  for (const Tensor& x : {leaf({4, 5}, 151), transposed_leaf({4, 5}, 152)}) {
    GradcheckResult r = gradcheck(f, {x});
    INFO(r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("dropout's gradient is the kept positions scaled by 1/(1-p), in both float dtypes") {
  const double p = 0.4;
  for (DType dtype : {DType::Float64, DType::Float32}) {
    Tensor x = detach(leaf({50}, 153, 1, 2)).to(dtype);  // nonzero, so the output shows the mask
    set_requires_grad(x);
    Generator gen(8);
    Tensor y = dropout(x, p, true, &gen);
    backward(sum(y));
    std::vector<double> out = values(y), g = values(grad(x));
    int dropped = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      bool kept = out[i] != 0.0;
      dropped += !kept;
      CHECK(g[i] == Approx(kept ? 1.0 / (1.0 - p) : 0.0));
    }
    CHECK(dropped > 0);
    CHECK(dropped < 50);
  }
}

TEST_CASE("dropout in evaluation mode or with p = 0 passes the gradient through") {
  Tensor x = leaf({3}, 154);
  backward(sum(dropout(x, 0.5, false) * 2.0 + dropout(x, 0.0, true)));
  CHECK(values(grad(x)) == std::vector<double>{3, 3, 3});
  CHECK_THROWS_AS(dropout(x, 1.5, true), Error);
}

TEST_CASE("dropout_add: gradcheck with a fixed mask, and residual + dropout(x) in value and gradient") {
  auto fused = [](const std::vector<Tensor>& in) {
    Generator gen(9);
    return dropout_add(in[0], in[1], 0.3, true, &gen);
  };
  auto composed = [](const std::vector<Tensor>& in) {
    Generator gen(9);
    return in[1] + dropout(in[0], 0.3, true, &gen);
  };
  for (const std::vector<Tensor>& in : {std::vector{leaf({4, 5}, 155), leaf({4, 5}, 156)},
                                        std::vector{transposed_leaf({3, 6}, 157), leaf({3, 6}, 158)}}) {
    GradcheckResult r = gradcheck(fused, in);
    INFO(r.message);
    CHECK(r.ok);
    NoGradGuard no_grad;
    CHECK(values(fused(in)) == values(composed(in)));
  }
  const std::vector<Tensor> in{leaf({6, 7}, 159), leaf({6, 7}, 160)};
  const Tensor weights = gradcheck_weights({6, 7}, DType::Float64);
  const std::vector<Tensor> a = weighted_gradients(fused, in, weights), b = weighted_gradients(composed, in, weights);
  CHECK(values(a[0]) == values(b[0]));
  CHECK(values(a[1]) == values(b[1]));
}

TEST_CASE("dropout_add in evaluation mode or with p = 0 is the plain sum") {
  Tensor x = leaf({3}, 161), residual = leaf({3}, 162);
  backward(sum(dropout_add(x, residual, 0.5, false) * 2.0 + dropout_add(x, residual, 0.0, true)));
  CHECK(values(grad(x)) == std::vector<double>{3, 3, 3});
  CHECK(values(grad(residual)) == std::vector<double>{3, 3, 3});
  CHECK_THROWS_AS(dropout_add(x, residual, -0.1, true), Error);
}
