// Reductions, arg-max/min and cumsum (core/cpu/reduce.cpp, core/ops_reduce.cpp) against
// float64 reference loops over every set of dims, on contiguous and strided inputs.
#include <catch.hpp>

#include <cmath>
#include <numeric>

#include "core/backend.hpp"
#include "core/ops.hpp"
#include "core/threads.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Contains;

namespace {

// The elements of x (values in row-major order) that reduce into each output, grouped by
// the output's flat index in the keepdim shape.
std::vector<std::vector<double>> group_by_output(const std::vector<double>& values, const Shape& shape,
                                                 const std::vector<bool>& reduced) {
  Shape out_shape = shape;
  for (int d = 0; d < shape.size(); ++d)
    if (reduced[size_t(d)]) out_shape[d] = 1;
  std::vector<std::vector<double>> groups(size_t(out_shape.numel()));
  for (int64_t flat = 0; flat < shape.numel(); ++flat) {
    int64_t rem = flat, out_flat = 0, out_stride = 1;
    for (int d = shape.size() - 1; d >= 0; --d) {
      const int64_t i = rem % shape[d];
      rem /= shape[d];
      out_flat += (reduced[size_t(d)] ? 0 : i) * out_stride;
      out_stride *= out_shape[d];
    }
    groups[size_t(out_flat)].push_back(values[size_t(flat)]);
  }
  return groups;
}

double reference(ReduceOp op, const std::vector<double>& v) {
  switch (op) {
    case ReduceOp::Sum: return std::accumulate(v.begin(), v.end(), 0.0);
    case ReduceOp::Mean: return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    case ReduceOp::Max: return *std::max_element(v.begin(), v.end());
    case ReduceOp::Min: return *std::min_element(v.begin(), v.end());
    case ReduceOp::Prod: return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<>());
    case ReduceOp::Norm2: {
      double s = 0;
      for (double x : v) s += x * x;
      return std::sqrt(s);
    }
    case ReduceOp::LogSumExp: {
      double s = 0;
      for (double x : v) s += std::exp(x);
      return std::log(s);
    }
  }
  return 0;
}

Tensor run(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  switch (op) {
    case ReduceOp::Sum: return ops::sum(x, dims, keepdim);
    case ReduceOp::Mean: return ops::mean(x, dims, keepdim);
    case ReduceOp::Max: return ops::amax(x, dims, keepdim);
    case ReduceOp::Min: return ops::amin(x, dims, keepdim);
    case ReduceOp::LogSumExp: return ops::logsumexp(x, dims, keepdim);
    case ReduceOp::Norm2: return ops::norm(x, dims, keepdim);
    case ReduceOp::Prod: break;  // no public op: tested on the kernel below
  }
  return {};
}

const std::vector<ReduceOp> kOps = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min, ReduceOp::LogSumExp,
                                    ReduceOp::Norm2};

}  // namespace

TEST_CASE("reductions over every subset of dims match float64 references") {
  const Shape shape{3, 1, 4, 5};
  for (DType dtype : {DType::Float64, DType::Float32})
    for (int layout : {0, 1, 2}) {
      Tensor x = random_tensor(shape, dtype, 7 + layout, layout);
      const std::vector<double> values = x.to_vector();
      for (int mask = 0; mask < 16; ++mask) {
        std::vector<int64_t> dims;
        std::vector<bool> reduced(4, false);
        for (int d = 0; d < 4; ++d)
          if (mask & (1 << d)) dims.push_back(d - 4 * (d % 2)), reduced[size_t(d)] = true;  // some negative dims
        if (dims.empty()) reduced.assign(4, true);
        const auto groups = group_by_output(values, shape, reduced);
        for (ReduceOp op : kOps)
          for (bool keepdim : {true, false}) {
            Tensor out = run(op, x, dims, keepdim);
            std::vector<double> expected;
            for (const auto& g : groups) expected.push_back(reference(op, g));
            INFO("op " << int(op) << " mask " << mask << " layout " << layout << " " << dtype_name(dtype));
            CHECK(out.numel() == int64_t(expected.size()));
            CHECK(out.dtype() == dtype);
            if (keepdim) CHECK(out.dim() == 4);
            check_all_close(out.to_vector(), expected, 8 * tolerance_for(dtype));
          }
      }
    }
}

TEST_CASE("reductions of large tensors (parallel, both loop orders) agree with references") {
  set_num_threads(2);
  Tensor x = random_tensor({257, 300}, DType::Float32, 3, 1);
  const std::vector<double> values = x.to_vector();
  for (int dim : {0, 1}) {
    std::vector<bool> reduced{dim == 0, dim == 1};
    const auto groups = group_by_output(values, {257, 300}, reduced);
    std::vector<double> sums, maxes;
    for (const auto& g : groups) sums.push_back(reference(ReduceOp::Sum, g)), maxes.push_back(reference(ReduceOp::Max, g));
    check_all_close(ops::sum(x, {dim}).to_vector(), sums, 1e-5);
    check_all_close(ops::amax(x, {dim}).to_vector(), maxes, 0);
  }
  // Same numbers at 1 and 2 threads.
  Tensor two = ops::sum(x, {0});
  set_num_threads(1);
  Tensor one = ops::sum(x, {0});
  set_num_threads(2);
  CHECK(one.to_vector() == two.to_vector());
}

TEST_CASE("the Prod kernel multiplies over the reduced dims") {
  Tensor x = random_tensor({4, 3}, DType::Float64, 29, 1, 0.5, 1.5);
  Tensor out = empty({4, 1}, DType::Float64);
  backend_for(Device::cpu()).reduce(ReduceOp::Prod, x, out);
  for (int64_t i = 0; i < 4; ++i) CHECK(out.at({i, 0}) == Approx(x.at({i, 0}) * x.at({i, 1}) * x.at({i, 2})));
}

TEST_CASE("logsumexp is stable for large inputs and -inf rows") {
  Tensor x = from_doubles({1000, 1000, -INFINITY, -INFINITY}, {2, 2}, DType::Float32);
  std::vector<double> r = ops::logsumexp(x, {1}).to_vector();
  CHECK(r[0] == Approx(1000 + std::log(2.0)));
  CHECK(r[1] == -INFINITY);
}

TEST_CASE("max and min propagate NaN in both loop orders") {
  Tensor x = from_doubles({1, NAN, 3, 4, 5, 6}, {2, 3}, DType::Float32);
  for (int dim : {0, 1}) {
    CHECK(std::isnan(ops::amax(x, {dim}).to_vector()[dim == 0 ? 1 : 0]));
    CHECK(std::isnan(ops::amin(x, {dim}).to_vector()[dim == 0 ? 1 : 0]));
  }
  CHECK(ops::amax(x, {1}).to_vector()[1] == 6);
}

TEST_CASE("integer and bool sums; empty reductions") {
  Tensor i = from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(ops::sum(i, {1}).to_vector() == std::vector<double>{6, 15});
  CHECK(ops::amax(i, {0}).to_vector() == std::vector<double>{4, 5, 6});
  Tensor mask = ops::gt(i, 2);
  Tensor count = ops::sum(mask);
  CHECK(count.dtype() == DType::Int64);
  CHECK(count.item() == 4);
  Tensor e = zeros({0, 3});
  CHECK(ops::sum(e, {0}).to_vector() == std::vector<double>{0, 0, 0});
  CHECK(ops::sum(e, {1}).shape() == Shape{0});
  REQUIRE_THROWS_WITH(ops::amax(e, {0}), Contains("extent 0") && Contains("[0, 3]"));
  REQUIRE_THROWS_WITH(ops::mean(i), Contains("int64"));
  REQUIRE_THROWS_WITH(ops::sum(i, {2}), Contains("dim 2 out of range"));
}

TEST_CASE("max/min/argmax along a dim, ties to the first index") {
  Tensor x = from_doubles({1, 3, 3, 0, -1, -1, 2, 2}, {2, 4}, DType::Float64);
  ops::ValuesIndices mx = ops::max(x, 1);
  CHECK(mx.values.to_vector() == std::vector<double>{3, 2});
  CHECK(mx.indices.to_vector() == std::vector<double>{1, 2});
  ops::ValuesIndices mn = ops::min(x, -1, true);
  CHECK(mn.values.shape() == Shape{2, 1});
  CHECK(mn.indices.to_vector() == std::vector<double>{3, 0});
  CHECK(ops::argmax(x.transpose(0, 1), 1).to_vector() == std::vector<double>{0, 0, 0, 1});
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor r = random_tensor({6, 9}, dtype, 17, 1);
    ops::ValuesIndices a = ops::max(r, 0);
    for (int64_t j = 0; j < 9; ++j) {
      int64_t best = 0;
      for (int64_t k = 1; k < 6; ++k)
        if (r.at({k, j}) > r.at({best, j})) best = k;
      CHECK(a.indices.at({j}) == best);
      CHECK(a.values.at({j}) == r.at({best, j}));
    }
  }
}

TEST_CASE("cumsum forward and reverse along any dim") {
  for (DType dtype : {DType::Float64, DType::Float32})
    for (int dim : {0, 1, 2}) {
      Tensor x = random_tensor({3, 4, 5}, dtype, 19, 1);
      for (bool reverse : {false, true}) {
        Tensor out = ops::cumsum(x, dim, reverse);
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t b = 0; b < 4; ++b)
            for (int64_t c = 0; c < 5; ++c) {
              int64_t idx[3] = {a, b, c};
              double expected = 0;
              const int64_t n = x.size(dim);
              for (int64_t k = 0; k < n; ++k) {
                if (reverse ? k < idx[dim] : k > idx[dim]) continue;
                int64_t j[3] = {a, b, c};
                j[dim] = k;
                expected += x.at({j[0], j[1], j[2]});
              }
              CHECK(out.at({a, b, c}) == Approx(expected).epsilon(1e-6).margin(1e-6));
            }
      }
    }
  CHECK(ops::cumsum(from_vector<int32_t>({1, 2, 3}, {3}), 0).to_vector() == std::vector<double>{1, 3, 6});
  CHECK(ops::cumsum(zeros({0, 2}), 0).shape() == Shape{0, 2});
}

TEST_CASE("sum_to reduces a broadcast gradient back to its shape") {
  Tensor g = random_tensor({2, 3, 4}, DType::Float64, 23, 1);
  Tensor s = ops::sum_to(g, {3, 1});
  REQUIRE(s.shape() == Shape{3, 1});
  for (int64_t j = 0; j < 3; ++j) {
    double expected = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k) expected += g.at({i, j, k});
    CHECK(s.at({j, 0}) == Approx(expected));
  }
  CHECK(ops::sum_to(g, {2, 3, 4}).shares_storage(g));
  CHECK(ops::sum_to(g, {}).item() == Approx(ops::sum(g).item()));
  REQUIRE_THROWS_WITH(ops::sum_to(g, {5}), Contains("[5]") && Contains("[2, 3, 4]"));
}
