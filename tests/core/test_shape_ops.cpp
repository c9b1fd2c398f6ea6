// Shape ops (core/ops_shape.cpp): cat/stack copies, split/chunk views, triangles, causal mask.
#include <catch.hpp>

#include "core/ops.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Contains;

TEST_CASE("cat joins along any dim, from strided inputs") {
  for (DType dtype : {DType::Float64, DType::Float32})
    for (int dim : {0, 1, 2}) {
      Shape sa{2, 3, 4}, sb{2, 3, 4};
      sb[dim] = 1;
      Tensor a = random_tensor(sa, dtype, 1, 1), b = random_tensor(sb, dtype, 2, 2);
      Tensor out = ops::cat({a, b}, dim - 3);
      Shape expected = sa;
      expected[dim] += 1;
      REQUIRE(out.shape() == expected);
      for (int64_t i = 0; i < expected[0]; ++i)
        for (int64_t j = 0; j < expected[1]; ++j)
          for (int64_t k = 0; k < expected[2]; ++k) {
            int64_t idx[3] = {i, j, k};
            const bool from_a = idx[dim] < sa[dim];
            if (!from_a) idx[dim] -= sa[dim];
            CHECK(out.at({i, j, k}) == (from_a ? a : b).at({idx[0], idx[1], idx[2]}));
          }
    }
  REQUIRE_THROWS_WITH(ops::cat({zeros({2, 3}), zeros({3, 3})}, 1), Contains("[2, 3]") && Contains("[3, 3]"));
  REQUIRE_THROWS_WITH(ops::cat({zeros({2}), zeros({2}, DType::Float64)}, 0), Contains("float32") && Contains("float64"));
  CHECK(ops::cat({zeros({0, 2}), ones({1, 2})}, 0).to_vector() == std::vector<double>{1, 1});
}

TEST_CASE("stack adds a new dim") {
  Tensor a = from_doubles({1, 2}, {2}, DType::Float64), b = from_doubles({3, 4}, {2}, DType::Float64);
  CHECK(ops::stack({a, b}, 0).to_vector() == std::vector<double>{1, 2, 3, 4});
  Tensor s = ops::stack({a, b}, -1);
  CHECK(s.shape() == Shape{2, 2});
  CHECK(s.to_vector() == std::vector<double>{1, 3, 2, 4});
  REQUIRE_THROWS_WITH(ops::stack({a, zeros({3}, DType::Float64)}, 0), Contains("[2]") && Contains("[3]"));
}

TEST_CASE("split and chunk return views covering the tensor") {
  Tensor x = arange(0, 10, 1, DType::Float64).view({2, 5});
  std::vector<Tensor> parts = ops::split(x, 2, 1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].shape() == Shape{2, 1});
  CHECK(parts[1].to_vector() == std::vector<double>{2, 3, 7, 8});
  CHECK(parts[0].shares_storage(x));
  std::vector<Tensor> chunks = ops::chunk(x, 2, 1);
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0].shape() == Shape{2, 3});
  CHECK(chunks[1].to_vector() == std::vector<double>{3, 4, 8, 9});
  REQUIRE_THROWS_WITH(ops::split(x, 0, 1), Contains("positive"));
}

TEST_CASE("tril and triu keep one triangle of the last two dims") {
  Tensor x = random_tensor({2, 3, 4}, DType::Float32, 4, 1);
  for (int64_t k : {-1, 0, 2}) {
    Tensor lo = ops::tril(x, k), up = ops::triu(x, k);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          CHECK(lo.at({b, i, j}) == (j - i <= k ? x.at({b, i, j}) : 0.0));
          CHECK(up.at({b, i, j}) == (j - i >= k ? x.at({b, i, j}) : 0.0));
        }
  }
  REQUIRE_THROWS_WITH(ops::tril(zeros({3}), 0), Contains("[3]"));
}

TEST_CASE("causal_mask marks future positions") {
  Tensor m = ops::causal_mask(3, 4);
  CHECK(m.dtype() == DType::Bool);
  CHECK(m.to_vector() == std::vector<double>{0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1});
}
