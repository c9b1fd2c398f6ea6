// The gated linear attention kernels (core/cpu/gated_linear_attention.cpp, docs/models.md §5.0,
// §5.6): forward and backward against a plain float64 recurrence that stores every state, with
// and without each gate, across several backward chunks; a sequence split in two with the
// state carried equals the whole; gates at exactly 0 give finite gradients; the same bits at 1
// and 2 threads; bad shapes are named.
#include <catch.hpp>

#include <cmath>

#include "core/ops.hpp"
#include "core/threads.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Matchers::Contains;

namespace {

struct Case {
  int64_t rows, length, features, values;  // R, T, M, N
  bool value_gate, key_gate;
};

struct Inputs {
  Tensor q, k, v, a, b;
};

Inputs random_inputs(const Case& c, DType dtype, int layout = 0) {
  Inputs in{random_tensor({c.rows, c.length, c.features}, dtype, 1, layout),
            random_tensor({c.rows, c.length, c.features}, dtype, 2),
            random_tensor({c.rows, c.length, c.values}, dtype, 3, layout),
            {},
            {}};
  if (c.value_gate) in.a = random_tensor({c.rows, c.length, c.values}, dtype, 4, 0, 0.0, 1.0);
  if (c.key_gate) in.b = random_tensor({c.rows, c.length, c.features}, dtype, 5, 0, 0.0, 1.0);
  return in;
}

struct Expected {
  std::vector<double> y, state, dq, dk, dv, da, db;
};

// The recurrence with every S_t kept, and its backward walked from the stored states.
Expected reference(const Case& c, const Inputs& in, const std::vector<double>& g) {
  const std::vector<double> q = in.q.to_vector(), k = in.k.to_vector(), v = in.v.to_vector();
  const std::vector<double> a = in.a.defined() ? in.a.to_vector() : std::vector<double>(v.size(), 1.0);
  const std::vector<double> b = in.b.defined() ? in.b.to_vector() : std::vector<double>(q.size(), 1.0);
  const int64_t M = c.features, N = c.values, T = c.length;
  Expected e{std::vector<double>(v.size()), std::vector<double>(size_t(c.rows * N * M)),
             std::vector<double>(q.size()), std::vector<double>(q.size()), std::vector<double>(v.size()),
             std::vector<double>(v.size()), std::vector<double>(q.size())};
  for (int64_t r = 0; r < c.rows; ++r) {
    auto qk = [&](int64_t t, int64_t j) { return size_t((r * T + t) * M + j); };
    auto vo = [&](int64_t t, int64_t i) { return size_t((r * T + t) * N + i); };
    std::vector<std::vector<double>> S(size_t(T + 1), std::vector<double>(size_t(N * M), 0.0));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < M; ++j) {
          double& s = S[size_t(t + 1)][size_t(i * M + j)];
          s = a[vo(t, i)] * b[qk(t, j)] * S[size_t(t)][size_t(i * M + j)] + v[vo(t, i)] * k[qk(t, j)];
          e.y[vo(t, i)] += s * q[qk(t, j)];
        }
    std::copy(S[size_t(T)].begin(), S[size_t(T)].end(), e.state.begin() + r * N * M);
    std::vector<double> U(size_t(N * M), 0.0);
    for (int64_t t = T - 1; t >= 0; --t)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < M; ++j) {
          double& u = U[size_t(i * M + j)];
          if (t + 1 < T) u *= a[vo(t + 1, i)] * b[qk(t + 1, j)];
          u += g[vo(t, i)] * q[qk(t, j)];
          e.dq[qk(t, j)] += S[size_t(t + 1)][size_t(i * M + j)] * g[vo(t, i)];
          e.dv[vo(t, i)] += u * k[qk(t, j)];
          e.dk[qk(t, j)] += u * v[vo(t, i)];
          const double dgate = u * S[size_t(t)][size_t(i * M + j)];
          e.da[vo(t, i)] += dgate * b[qk(t, j)];
          e.db[qk(t, j)] += dgate * a[vo(t, i)];
        }
  }
  return e;
}

void check_case(const Case& c, DType dtype, int layout = 0) {
  INFO("R " << c.rows << " T " << c.length << " M " << c.features << " N " << c.values << " gates "
            << c.value_gate << c.key_gate << " " << dtype_name(dtype) << " layout " << layout);
  const Inputs in = random_inputs(c, dtype, layout);
  const Tensor g = random_tensor({c.rows, c.length, c.values}, dtype, 6);
  const Expected e = reference(c, in, g.to_vector());
  // float32 sums over T steps: a looser bound than one product.
  const double tol = dtype == DType::Float64 ? 1e-11 : 2e-5 * double(c.length);
  const ops::GatedLinearAttentionResult r = ops::gated_linear_attention(in.q, in.k, in.v, in.a, in.b);
  check_all_close(r.y.to_vector(), e.y, tol);
  check_all_close(r.state.to_vector(), e.state, tol);
  const ops::GatedLinearAttentionGrads d = ops::gated_linear_attention_backward(in.q, in.k, in.v, in.a, in.b, g);
  check_all_close(d.dq.to_vector(), e.dq, tol);
  check_all_close(d.dk.to_vector(), e.dk, tol);
  check_all_close(d.dv.to_vector(), e.dv, tol);
  CHECK(d.da.defined() == c.value_gate);
  CHECK(d.db.defined() == c.key_gate);
  if (c.value_gate) check_all_close(d.da.to_vector(), e.da, tol);
  if (c.key_gate) check_all_close(d.db.to_vector(), e.db, tol);
}

}  // namespace

TEST_CASE("gated_linear_attention forward and backward equal the stored-state float64 recurrence") {
  for (bool value_gate : {false, true})
    for (bool key_gate : {false, true}) {
      check_case({2, 5, 3, 4, value_gate, key_gate}, DType::Float64);
      check_case({3, 150, 4, 3, value_gate, key_gate}, DType::Float64);  // three backward chunks
      check_case({2, 70, 8, 5, value_gate, key_gate}, DType::Float32, 1);
    }
  check_case({1, 1, 1, 1, true, true}, DType::Float64);
  check_case({2, 64, 3, 2, true, false}, DType::Float64, 2);  // exactly one chunk, strided inputs
  // Without gates from 16 positions on, the chunked GEMM form (additive_linear_attention.hpp):
  // its first length, one full chunk, a partial second one, a partial third one.
  for (int64_t length : {15, 16, 64, 65, 150}) check_case({3, length, 5, 4, false, false}, DType::Float64);
  check_case({4, 200, 16, 17, false, false}, DType::Float32, 1);
}

TEST_CASE("gated_linear_attention: a sequence in two parts with the state carried equals the whole") {
  // Gated (the scan), and additive over 100 positions in parts of 70 and 30 (chunked, then the scan).
  const Case c = GENERATE(Case{2, 9, 3, 4, true, true}, Case{2, 100, 3, 4, false, false});
  const int64_t split = c.length == 9 ? 4 : 70;
  const Inputs in = random_inputs(c, DType::Float64);
  const ops::GatedLinearAttentionResult whole = ops::gated_linear_attention(in.q, in.k, in.v, in.a, in.b);
  auto part = [](const Tensor& t, int64_t start, int64_t length) { return t.narrow(1, start, length); };
  const int64_t rest = c.length - split;
  auto gate = [&](const Tensor& g, int64_t start, int64_t length) { return g.defined() ? part(g, start, length) : g; };
  const ops::GatedLinearAttentionResult first = ops::gated_linear_attention(
      part(in.q, 0, split), part(in.k, 0, split), part(in.v, 0, split), gate(in.a, 0, split), gate(in.b, 0, split));
  const ops::GatedLinearAttentionResult second =
      ops::gated_linear_attention(part(in.q, split, rest), part(in.k, split, rest), part(in.v, split, rest),
                                  gate(in.a, split, rest), gate(in.b, split, rest), first.state);
  check_all_close(part(whole.y, 0, split).to_vector(), first.y.to_vector(), 1e-12);
  check_all_close(part(whole.y, split, rest).to_vector(), second.y.to_vector(), 1e-12);
  check_all_close(whole.state.to_vector(), second.state.to_vector(), 1e-12);
}

TEST_CASE("gated_linear_attention: gates at exactly 0 give finite gradients (nothing divides by a gate)") {
  const Case c{1, 100, 3, 2, true, true};
  Inputs in = random_inputs(c, DType::Float32);
  in.a.fill_(0.0);
  in.b.narrow(1, 0, 50).fill_(0.0);
  const Tensor g = random_tensor({1, 100, 2}, DType::Float32, 7);
  const ops::GatedLinearAttentionGrads d = ops::gated_linear_attention_backward(in.q, in.k, in.v, in.a, in.b, g);
  for (const Tensor& t : {d.dq, d.dk, d.dv, d.da, d.db})
    for (double x : t.to_vector()) REQUIRE(std::isfinite(x));
  const Expected e = reference(c, in, g.to_vector());
  check_all_close(d.da.to_vector(), e.da, 1e-4);
}

TEST_CASE("gated_linear_attention gives the same bits at 1 and 2 threads") {
  const Case c = GENERATE(Case{5, 130, 8, 9, true, true}, Case{5, 130, 8, 9, false, false});
  const Inputs in = random_inputs(c, DType::Float32);
  const Tensor g = random_tensor({5, 130, 9}, DType::Float32, 8);
  auto run = [&](int threads) {
    set_num_threads(threads);
    std::vector<double> all = ops::gated_linear_attention(in.q, in.k, in.v, in.a, in.b).y.to_vector();
    for (double x : ops::gated_linear_attention_backward(in.q, in.k, in.v, in.a, in.b, g).dk.to_vector())
      all.push_back(x);
    return all;
  };
  const int before = get_num_threads();
  const std::vector<double> one = run(1), two = run(2);
  set_num_threads(before);
  CHECK(one == two);
}

TEST_CASE("gated_linear_attention names bad shapes") {
  const Tensor q = random_tensor({2, 3, 4}, DType::Float32, 1), v = random_tensor({2, 3, 5}, DType::Float32, 2);
  CHECK_THROWS_WITH(ops::gated_linear_attention(q, random_tensor({2, 3, 5}, DType::Float32, 3), v, {}, {}),
                    Contains("keys"));
  CHECK_THROWS_WITH(ops::gated_linear_attention(q, q, random_tensor({2, 4, 5}, DType::Float32, 3), {}, {}),
                    Contains("values must be [2, 3, N]"));
  CHECK_THROWS_WITH(ops::gated_linear_attention(q, q, v, q, {}), Contains("value gates"));
  CHECK_THROWS_WITH(ops::gated_linear_attention(q, q, v, {}, {}, random_tensor({2, 4, 5}, DType::Float32, 4)),
                    Contains("state must be [2, 5, 4]"));
}
