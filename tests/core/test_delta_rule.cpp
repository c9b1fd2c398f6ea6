// The delta-rule kernels (core/cpu/delta_rule.cpp, docs/models.md §5.5): forward and backward
// against a plain float64 recurrence that keeps every W_t, across several backward chunks;
// a sequence split in two with the state carried equals the whole; β = 0 writes nothing; bad
// shapes are named.
#include <catch.hpp>

#include "core/ops.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Matchers::Contains;

namespace {

struct Inputs {
  Tensor q, k, v, beta;
};

Inputs random_inputs(int64_t rows, int64_t length, int64_t features, int64_t values, DType dtype) {
  return {random_tensor({rows, length, features}, dtype, 1, 0, -1, 1), random_tensor({rows, length, features}, dtype, 2, 0, -1, 1),
          random_tensor({rows, length, values}, dtype, 3), random_tensor({rows, length}, dtype, 4, 0, 0.0, 1.0)};
}

struct Expected {
  std::vector<double> y, state, dq, dk, dv, dbeta;
};

Expected reference(const Inputs& in, const std::vector<double>& g) {
  const int64_t R = in.q.size(0), T = in.q.size(1), M = in.q.size(2), N = in.v.size(2);
  const std::vector<double> q = in.q.to_vector(), k = in.k.to_vector(), v = in.v.to_vector(), beta = in.beta.to_vector();
  Expected e{std::vector<double>(v.size()), std::vector<double>(size_t(R * N * M)), std::vector<double>(q.size()),
             std::vector<double>(q.size()), std::vector<double>(v.size()), std::vector<double>(beta.size())};
  for (int64_t r = 0; r < R; ++r) {
    auto qk = [&](int64_t t, int64_t j) { return size_t((r * T + t) * M + j); };
    auto vo = [&](int64_t t, int64_t i) { return size_t((r * T + t) * N + i); };
    std::vector<std::vector<double>> W(size_t(T + 1), std::vector<double>(size_t(N * M), 0.0));
    std::vector<std::vector<double>> U(size_t(T), std::vector<double>(size_t(N), 0.0));
    for (int64_t t = 0; t < T; ++t) {
      W[size_t(t + 1)] = W[size_t(t)];
      for (int64_t i = 0; i < N; ++i) {
        double recalled = 0;
        for (int64_t j = 0; j < M; ++j) recalled += W[size_t(t)][size_t(i * M + j)] * k[qk(t, j)];
        U[size_t(t)][size_t(i)] = beta[size_t(r * T + t)] * (v[vo(t, i)] - recalled);
        for (int64_t j = 0; j < M; ++j) W[size_t(t + 1)][size_t(i * M + j)] += U[size_t(t)][size_t(i)] * k[qk(t, j)];
        for (int64_t j = 0; j < M; ++j) e.y[vo(t, i)] += W[size_t(t + 1)][size_t(i * M + j)] * q[qk(t, j)];
      }
    }
    std::copy(W[size_t(T)].begin(), W[size_t(T)].end(), e.state.begin() + r * N * M);
    std::vector<double> G(size_t(N * M), 0.0);
    for (int64_t t = T - 1; t >= 0; --t) {
      const double b = beta[size_t(r * T + t)];
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < M; ++j) {
          G[size_t(i * M + j)] += g[vo(t, i)] * q[qk(t, j)];
          e.dq[qk(t, j)] += W[size_t(t + 1)][size_t(i * M + j)] * g[vo(t, i)];
        }
      for (int64_t i = 0; i < N; ++i) {
        double du = 0, recalled = 0;
        for (int64_t j = 0; j < M; ++j) {
          du += G[size_t(i * M + j)] * k[qk(t, j)];
          recalled += W[size_t(t)][size_t(i * M + j)] * k[qk(t, j)];
          e.dk[qk(t, j)] += G[size_t(i * M + j)] * U[size_t(t)][size_t(i)];
        }
        e.dv[vo(t, i)] = b * du;
        e.dbeta[size_t(r * T + t)] += (v[vo(t, i)] - recalled) * du;
        for (int64_t j = 0; j < M; ++j) {
          e.dk[qk(t, j)] += W[size_t(t)][size_t(i * M + j)] * (-b * du);
          G[size_t(i * M + j)] += -b * du * k[qk(t, j)];
        }
      }
    }
  }
  return e;
}

}  // namespace

TEST_CASE("delta_rule forward and backward equal the stored-state float64 recurrence") {
  for (auto [rows, length, features, values, dtype] :
       {std::tuple{2, 5, 3, 4, DType::Float64}, std::tuple{2, 150, 4, 3, DType::Float64},
        std::tuple{3, 70, 6, 5, DType::Float32}}) {
    INFO("R " << rows << " T " << length << " " << dtype_name(dtype));
    const Inputs in = random_inputs(rows, length, features, values, dtype);
    const Tensor g = random_tensor({rows, length, values}, dtype, 5);
    const Expected e = reference(in, g.to_vector());
    const double tol = dtype == DType::Float64 ? 1e-11 : 1e-4;
    const ops::DeltaRuleResult r = ops::delta_rule(in.q, in.k, in.v, in.beta);
    check_all_close(r.y.to_vector(), e.y, tol);
    check_all_close(r.state.to_vector(), e.state, tol);
    const ops::DeltaRuleGrads d = ops::delta_rule_backward(in.q, in.k, in.v, in.beta, g);
    check_all_close(d.dq.to_vector(), e.dq, tol);
    check_all_close(d.dk.to_vector(), e.dk, tol);
    check_all_close(d.dv.to_vector(), e.dv, tol);
    check_all_close(d.dbeta.to_vector(), e.dbeta, tol);
  }
}

TEST_CASE("delta_rule: two parts with the state carried equal the whole; beta = 0 writes nothing") {
  const Inputs in = random_inputs(2, 9, 3, 4, DType::Float64);
  const ops::DeltaRuleResult whole = ops::delta_rule(in.q, in.k, in.v, in.beta);
  auto part = [](const Tensor& t, int64_t start, int64_t n) { return t.narrow(1, start, n); };
  const ops::DeltaRuleResult first = ops::delta_rule(part(in.q, 0, 4), part(in.k, 0, 4), part(in.v, 0, 4), part(in.beta, 0, 4));
  const ops::DeltaRuleResult second =
      ops::delta_rule(part(in.q, 4, 5), part(in.k, 4, 5), part(in.v, 4, 5), part(in.beta, 4, 5), first.state);
  check_all_close(part(whole.y, 4, 5).to_vector(), second.y.to_vector(), 1e-13);
  check_all_close(whole.state.to_vector(), second.state.to_vector(), 1e-13);
  const ops::DeltaRuleResult none = ops::delta_rule(in.q, in.k, in.v, zeros({2, 9}, DType::Float64));
  for (double x : none.y.to_vector()) CHECK(x == 0.0);
}

TEST_CASE("delta_rule names bad shapes") {
  const Tensor q = random_tensor({2, 3, 4}, DType::Float32, 1), v = random_tensor({2, 3, 5}, DType::Float32, 2);
  CHECK_THROWS_WITH(ops::delta_rule(q, q, v, random_tensor({2, 4}, DType::Float32, 3)), Contains("write strengths"));
  CHECK_THROWS_WITH(ops::delta_rule(q, q, random_tensor({2, 4, 5}, DType::Float32, 3), random_tensor({2, 3}, DType::Float32, 4)),
                    Contains("values must be [2, 3, N]"));
}
