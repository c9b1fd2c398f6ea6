// Dropout and its fused forms (core/cpu/dropout.cpp, core/ops_random.cpp): the keep-mask is
// exactly uniform_i >= p for the per-element Philox uniforms (also at p equal to a drawn
// value, where the float32 integer-threshold test must agree), dropout_add equals
// residual + dropout(x) bit for bit, the backward matches a float64 reference, a dropped
// element is +0 whatever its value, and all of it is the same at 1 and 2 threads.
#include <catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/ops.hpp"
#include "core/threads.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Contains;

namespace {

// The uniform of stream element i that dropout compares with p.
double stream_uniform(DType dtype, uint64_t seed, uint64_t first, uint64_t i) {
  return dtype == DType::Float64 ? philox_uniform_double(seed, first, i) : double(philox_uniform_float(seed, first, i));
}

// Reference keep-mask of a dropout drawn from `gen`'s current state over n elements.
std::vector<bool> reference_keep(DType dtype, const Generator& gen, int64_t n, double p) {
  const GeneratorState s = gen.state();
  std::vector<bool> keep(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keep[size_t(i)] = stream_uniform(dtype, s.seed, s.offset, uint64_t(i)) >= p;
  return keep;
}

}  // namespace

TEST_CASE("dropout keeps exactly the elements whose uniform is >= p") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Generator gen(11);
    gen.reserve(5);  // an unaligned start inside a Philox block
    const Tensor x = random_tensor({37, 41}, dtype, 12);
    const double p = 0.3;
    const std::vector<bool> keep = reference_keep(dtype, gen, x.numel(), p);
    const ops::DropoutResult r = ops::dropout(x, p, &gen);
    const std::vector<double> xv = x.to_vector(), mv = r.mask.to_vector();
    std::vector<double> expected(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      REQUIRE(mv[i] == double(keep[i]));
      expected[i] = keep[i] ? xv[i] / (1.0 - p) : 0.0;
    }
    check_all_close(r.out.to_vector(), expected, tolerance_for(dtype));
  }
}

TEST_CASE("the keep test agrees with uniform >= p when p equals a drawn uniform") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Generator start(21);
    const Tensor x = ones({3000}, dtype);
    for (uint64_t i : {uint64_t(0), uint64_t(17), uint64_t(2999)}) {
      const double u = stream_uniform(dtype, 21, 0, i);
      for (double p : {u, std::nextafter(u, 2.0), std::nextafter(u, -1.0)}) {
        Generator gen = start;
        const std::vector<double> mask = ops::dropout(x, p, &gen).mask.to_vector();
        INFO("element " << i << ", p = " << p << ", u = " << u);
        CHECK(mask[size_t(i)] == double(u >= p));
      }
    }
  }
}

TEST_CASE("dropout_add is residual + dropout(x) bit for bit, with the same mask") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int layout : {0, 1}) {  // contiguous and transposed input
      const Tensor x = random_tensor({33, 65}, dtype, 31, layout), residual = random_tensor({33, 65}, dtype, 32);
      Generator g1(41), g2(41);
      const ops::DropoutResult plain = ops::dropout(x, 0.25, &g1);
      const ops::DropoutResult fused = ops::dropout_add(x, residual, 0.25, &g2);
      CHECK(fused.mask.to_vector() == plain.mask.to_vector());
      CHECK(fused.out.to_vector() == ops::add(residual, plain.out).to_vector());
      CHECK(g1.state().offset == g2.state().offset);  // both reserve the same counters
    }
  }
}

TEST_CASE("dropout and dropout_add are the same at 1 and 2 threads on a large tensor") {
  const Tensor x = random_tensor({300, 513}, DType::Float32, 51), residual = random_tensor({300, 513}, DType::Float32, 52);
  set_num_threads(1);
  Generator g1(53);
  const ops::DropoutResult one = ops::dropout_add(x, residual, 0.1, &g1);
  set_num_threads(2);
  Generator g2(53);
  const ops::DropoutResult two = ops::dropout_add(x, residual, 0.1, &g2);
  CHECK(two.mask.to_vector() == one.mask.to_vector());
  CHECK(two.out.to_vector() == one.out.to_vector());
}

TEST_CASE("dropout_backward is mask ? dy / (1 - p) : 0, also for strided dy and p = 1") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor dy = random_tensor({20, 30}, dtype, 61, 1);
    Generator gen(62);
    const Tensor mask = ops::dropout(ones({20, 30}, dtype), 0.4, &gen).mask;
    const std::vector<double> g = dy.to_vector(), m = mask.to_vector();
    std::vector<double> expected(g.size()), zeros_expected(g.size(), 0.0);
    for (size_t i = 0; i < g.size(); ++i) expected[i] = m[i] != 0.0 ? g[i] / 0.6 : 0.0;
    check_all_close(ops::dropout_backward(dy, mask, 0.4).to_vector(), expected, tolerance_for(dtype));
    const Tensor none_kept = ops::dropout(ones({20, 30}, dtype), 1.0, &gen).mask;
    CHECK(ops::dropout_backward(dy, none_kept, 1.0).to_vector() == zeros_expected);
  }
}

TEST_CASE("a dropped element is +0 exactly, whatever its value (negative, infinite, NaN)") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const double pattern[] = {-1.5, -inf, inf, nan};
    std::vector<double> values;
    for (int i = 0; i < 1000; ++i) values.push_back(pattern[i % 4]);
    const Tensor x = from_doubles(values, {1000}, dtype);
    Generator gen(71);
    const ops::DropoutResult r = ops::dropout(x, 0.5, &gen);
    const std::vector<double> out = r.out.to_vector(), mask = r.mask.to_vector(),
                              back = ops::dropout_backward(x, r.mask, 0.5).to_vector();
    int dropped = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (mask[i] != 0.0) continue;
      ++dropped;
      REQUIRE(out[i] == 0.0);
      REQUIRE(back[i] == 0.0);
      REQUIRE(!std::signbit(out[i]));
      REQUIRE(!std::signbit(back[i]));
    }
    CHECK(dropped > 400);
  }
}

TEST_CASE("dropout_add and dropout_backward name the mismatch") {
  const Tensor x = ones({2, 3}), wide = ones({2, 4});
  CHECK_THROWS_WITH(ops::dropout_add(x, wide, 0.1), Contains("[2, 4]") && Contains("[2, 3]"));
  CHECK_THROWS_WITH(ops::dropout_add(x, ones({2, 3}, DType::Float64), 0.1), Contains("float64"));
  CHECK_THROWS_WITH(ops::dropout_add(x, x, 1.5), Contains("1.5"));
  CHECK_THROWS_WITH(ops::dropout_backward(x, ones({2, 3}), 0.1), Contains("Bool"));
}
