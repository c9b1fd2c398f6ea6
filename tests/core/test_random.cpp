// Random tensors and dropout (core/cpu/random.cpp, core/creation.cpp, core/ops_random.cpp):
// the same stream at 1 and 2 threads, element i independent of the tensor's size, and the
// distributions' moments.
#include <catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/ops.hpp"
#include "core/threads.hpp"

using namespace attn;
using Catch::Contains;

namespace {

struct Moments {
  double mean, variance;
};
Moments moments(const std::vector<double>& v) {
  double s = 0, s2 = 0;
  for (double x : v) s += x, s2 += x * x;
  const double n = double(v.size()), mean = s / n;
  return {mean, s2 / n - mean * mean};
}

}  // namespace

TEST_CASE("uniform and normal have the right moments") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Generator g(1);
    std::vector<double> u = uniform({200000}, -1, 3, dtype, &g).to_vector();
    CHECK(*std::min_element(u.begin(), u.end()) >= -1);
    CHECK(*std::max_element(u.begin(), u.end()) < 3);
    Moments mu = moments(u);
    CHECK(mu.mean == Approx(1.0).margin(0.02));
    CHECK(mu.variance == Approx(16.0 / 12).margin(0.02));
    Moments mn = moments(normal({200000}, 2, 0.5, dtype, &g).to_vector());
    CHECK(mn.mean == Approx(2.0).margin(0.01));
    CHECK(mn.variance == Approx(0.25).margin(0.01));
  }
}

TEST_CASE("random tensors are the same stream at 1 and 2 threads") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    set_num_threads(1);
    Generator g1(77);
    const std::vector<double> u1 = uniform({300, 301}, 0, 1, dtype, &g1).to_vector();
    const std::vector<double> n1 = normal({300, 301}, 0, 1, dtype, &g1).to_vector();
    const Tensor x = ones({300, 301}, dtype);
    const ops::DropoutResult d1 = ops::dropout(x, 0.3, &g1);
    set_num_threads(2);
    Generator g2(77);
    CHECK(uniform({300, 301}, 0, 1, dtype, &g2).to_vector() == u1);
    CHECK(normal({300, 301}, 0, 1, dtype, &g2).to_vector() == n1);
    const ops::DropoutResult d2 = ops::dropout(x, 0.3, &g2);
    CHECK(d2.mask.to_vector() == d1.mask.to_vector());
    CHECK(d2.out.to_vector() == d1.out.to_vector());
  }
}

TEST_CASE("the kernels draw exactly the per-element Philox uniforms (what CUDA computes)") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Generator g(99);
    g.reserve(3);  // an unaligned start inside a Philox block
    const uint64_t seed = g.state().seed, first = g.state().offset;
    const std::vector<double> u = uniform({2500}, 0, 1, dtype, &g).to_vector();
    for (uint64_t i = 0; i < u.size(); ++i) {
      const double expected = dtype == DType::Float64 ? philox_uniform_double(seed, first, i)
                                                      : double(philox_uniform_float(seed, first, i));
      if (u[i] != expected) FAIL("element " << i << ": " << u[i] << " vs " << expected);
    }
  }
}

TEST_CASE("element i depends only on the generator state, not on the tensor size") {
  Generator a(5), b(5);
  const std::vector<double> small = normal({7}, 0, 1, DType::Float32, &a).to_vector();
  const std::vector<double> large = normal({20}, 0, 1, DType::Float32, &b).to_vector();
  CHECK(std::vector<double>(large.begin(), large.begin() + 7) == small);
  CHECK(a.state().offset == 8);  // counters reserved: 7 rounded up to a Box-Muller pair
  Generator c(5);
  CHECK(uniform({3}, 0, 1, DType::Float64, &c).to_vector() != uniform({3}, 0, 1, DType::Float64, &c).to_vector());
  CHECK(c.state().offset == 16);
}

TEST_CASE("bernoulli gives 1 with probability p") {
  Generator g(3);
  Moments m = moments(bernoulli({100000}, 0.2, DType::Float32, &g).to_vector());
  CHECK(m.mean == Approx(0.2).margin(0.01));
  CHECK(bernoulli({4}, 1.0, DType::Int64, &g).to_vector() == std::vector<double>{1, 1, 1, 1});
  REQUIRE_THROWS_WITH(bernoulli({2}, 1.5), Contains("1.5"));
}

TEST_CASE("dropout zeroes with probability p and rescales the rest") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Generator g(11);
    Tensor x = uniform({100, 300}, 1, 2, dtype, &g).transpose(0, 1);  // strided input
    ops::DropoutResult r = ops::dropout(x, 0.25, &g);
    REQUIRE(r.out.shape() == x.shape());
    const std::vector<double> xv = x.to_vector(), ov = r.out.to_vector(), mv = r.mask.to_vector();
    double kept = 0;
    for (size_t i = 0; i < xv.size(); ++i) {
      kept += mv[i];
      CHECK(ov[i] == Approx(mv[i] != 0 ? xv[i] / 0.75 : 0.0).epsilon(1e-6));
    }
    CHECK(kept / double(xv.size()) == Approx(0.75).margin(0.01));
  }
  Tensor x = ones({10});
  CHECK(ops::dropout(x, 0.0).out.to_vector() == x.to_vector());
  CHECK(ops::dropout(x, 1.0).out.to_vector() == std::vector<double>(10, 0.0));
  REQUIRE_THROWS_WITH(ops::dropout(x, -0.1), Contains("-0.1"));
  REQUIRE_THROWS_WITH(ops::dropout(zeros({2}, DType::Int64), 0.5), Contains("int64"));
}
