// Gradients of softmax, log_softmax and layer_norm through the fused backward kernels
// (autograd/ops_normalization.cpp), along the last and inner dims, with and without the
// affine parameters, on non-contiguous inputs.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

TEST_CASE("softmax and log_softmax along every dim") {
  for (int64_t dim : {-1, 0, 1}) {
    auto sm = [dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); };
    auto lsm = [dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); };
    check_gradients(sm, {leaf({2, 3, 4}, 131, -2, 2)});
    check_gradients(sm, {transposed_leaf({2, 3, 4}, 132, -2, 2)});
    check_gradients(lsm, {leaf({2, 3, 4}, 133, -2, 2)});
    check_gradients(lsm, {transposed_leaf({2, 3, 4}, 134, -2, 2)});
  }
}

TEST_CASE("softmax's gradient matches exp(log_softmax)'s") {
  Tensor x = leaf({2, 5}, 135, -3, 3);
  Tensor weights = gradcheck_weights({2, 5}, DType::Float64);
  backward(sum(softmax(x, -1) * weights));
  std::vector<double> direct = values(grad(x));
  zero_grad(x);
  backward(sum(exp(log_softmax(x, -1)) * weights));
  std::vector<double> composed = values(grad(x));
  for (size_t i = 0; i < direct.size(); ++i) CHECK(direct[i] == Approx(composed[i]).epsilon(1e-12));
}

TEST_CASE("layer_norm with affine parameters") {
  auto f = [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], 1e-5); };
  check_gradients(f, {leaf({3, 4}, 136, -2, 2), leaf({4}, 137, 0.5, 1.5), leaf({4}, 138)});
  check_gradients(f, {transposed_leaf({2, 2, 5}, 139, -2, 2), leaf({5}, 140, 0.5, 1.5), leaf({5}, 141)});
  check_gradients(f, {leaf({5}, 142, -2, 2), leaf({5}, 143, 0.5, 1.5), leaf({5}, 144)});
}

TEST_CASE("layer_norm without affine parameters, or with frozen ones") {
  auto plain = [](const std::vector<Tensor>& in) { return layer_norm(in[0], Tensor(), Tensor(), 1e-5); };
  check_gradients(plain, {leaf({3, 4}, 145, -2, 2)});
  Tensor gamma = from_doubles({1, 2, 0.5, -1}, {4}, DType::Float64);
  Tensor beta = from_doubles({0, 1, 0, -1}, {4}, DType::Float64);
  auto frozen = [gamma, beta](const std::vector<Tensor>& in) {
    return layer_norm(in[0], gamma.to(in[0].dtype()), beta.to(in[0].dtype()), 1e-5);
  };
  check_gradients(frozen, {leaf({3, 4}, 146, -2, 2)});
}

TEST_CASE("layer_norm matches its composed definition in value and gradient") {
  Tensor x = leaf({3, 4}, 147, -2, 2), gamma = leaf({4}, 148, 0.5, 1.5), beta = leaf({4}, 149);
  const double eps = 1e-5;
  Tensor fused = layer_norm(x, gamma, beta, eps);
  Tensor centered = x - mean(x, {-1}, true);
  Tensor variance = mean(centered * centered, {-1}, true);
  Tensor composed = centered * rsqrt(variance + eps) * gamma + beta;
  std::vector<double> f = values(fused), c = values(composed);
  for (size_t i = 0; i < f.size(); ++i) CHECK(f[i] == Approx(c[i]).epsilon(1e-10));
  Tensor weights = gradcheck_weights({3, 4}, DType::Float64);
  backward(sum(fused * weights));
  std::vector<double> gx = values(grad(x)), gg = values(grad(gamma));
  for (Tensor t : {x, gamma, beta}) zero_grad(t);
  backward(sum(composed * weights));
  std::vector<double> ex = values(grad(x)), eg = values(grad(gamma));
  for (size_t i = 0; i < gx.size(); ++i) CHECK(gx[i] == Approx(ex[i]).epsilon(1e-8).margin(1e-10));
  for (size_t i = 0; i < gg.size(); ++i) CHECK(gg[i] == Approx(eg[i]).epsilon(1e-8).margin(1e-10));
}
