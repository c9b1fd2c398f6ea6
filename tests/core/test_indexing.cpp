// Indexing kernels and ops (core/cpu/indexing.cpp, core/ops_index.cpp) against plain loops.
#include <catch.hpp>

#include <algorithm>
#include <numeric>

#include "core/ops.hpp"
#include "reference.hpp"

using namespace attn;
using namespace attn::test;
using Catch::Contains;

TEST_CASE("embedding picks rows for indices of any shape") {
  for (DType dtype : {DType::Float64, DType::Float32})
    for (int layout : {0, 1}) {
      Tensor weight = random_tensor({7, 5}, dtype, 3, layout);
      Tensor ids = from_vector<int64_t>({6, 0, 3, 3, 1, 6}, {2, 3});
      Tensor out = ops::embedding(weight, ids);
      REQUIRE(out.shape() == Shape{2, 3, 5});
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t d = 0; d < 5; ++d) CHECK(out.at({i, j, d}) == weight.at({int64_t(ids.at({i, j})), d}));
    }
  Tensor w = zeros({4, 2});
  REQUIRE_THROWS_WITH(ops::embedding(w, from_vector<int64_t>({1, 4}, {2})), Contains("index 4") && Contains("[0, 4)"));
  REQUIRE_THROWS_WITH(ops::embedding(w, from_vector<int64_t>({-1}, {1})), Contains("index -1"));
  REQUIRE_THROWS_WITH(ops::embedding(w, zeros({2})), Contains("float32"));
  CHECK(ops::embedding(w, from_vector<int32_t>({3}, {1})).shape() == Shape{1, 2});
}

TEST_CASE("embedding_backward scatter-adds rows, skipping the padding row") {
  for (DType dtype : {DType::Float64, DType::Float32}) {
    Tensor ids = from_vector<int64_t>({2, 0, 2, 1, 2, 3}, {3, 2});
    Tensor grad_out = random_tensor({3, 2, 4}, dtype, 5, 1);
    for (int64_t padding : {-1, 1}) {
      Tensor g = ops::embedding_backward(grad_out, ids, 5, padding);
      REQUIRE(g.shape() == Shape{5, 4});
      for (int64_t row = 0; row < 5; ++row)
        for (int64_t d = 0; d < 4; ++d) {
          double expected = 0;
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 2; ++j)
              if (ids.at({i, j}) == row && row != padding) expected += grad_out.at({i, j, d});
          CHECK(g.at({row, d}) == Approx(expected).margin(1e-6));
        }
    }
  }
  REQUIRE_THROWS_WITH(ops::embedding_backward(zeros({3, 4}), from_vector<int64_t>({9, 0, 1}, {3}), 5),
                      Contains("index 9") && Contains("[0, 5)"));
  REQUIRE_THROWS_WITH(ops::embedding_backward(zeros({2, 4}), from_vector<int64_t>({0, 0, 1}, {3}), 5),
                      Contains("[2, 4]") && Contains("[3]"));
}

TEST_CASE("index_select along any dim") {
  Tensor x = random_tensor({3, 4, 5}, DType::Float64, 9, 1);
  Tensor idx = from_vector<int64_t>({2, 0, 2}, {3});
  for (int dim : {0, 1, 2}) {
    Tensor out = ops::index_select(x, dim, idx);
    Shape expected_shape = x.shape();
    expected_shape[dim] = 3;
    REQUIRE(out.shape() == expected_shape);
    for (int64_t a = 0; a < expected_shape[0]; ++a)
      for (int64_t b = 0; b < expected_shape[1]; ++b)
        for (int64_t c = 0; c < expected_shape[2]; ++c) {
          int64_t src[3] = {a, b, c};
          src[dim] = int64_t(idx.at({src[dim]}));
          CHECK(out.at({a, b, c}) == x.at({src[0], src[1], src[2]}));
        }
  }
  REQUIRE_THROWS_WITH(ops::index_select(x, 1, from_vector<int64_t>({4}, {1})), Contains("index 4") && Contains("[0, 4)"));
}

TEST_CASE("topk sorts values and breaks ties by the lower index") {
  Tensor x = from_doubles({1, 3, 2, 3, 0, 5, 5, 5, -1, 2}, {2, 5}, DType::Float32);
  ops::ValuesIndices top = ops::topk(x, 3);
  CHECK(top.values.to_vector() == std::vector<double>{3, 3, 2, 5, 5, 5});
  CHECK(top.indices.to_vector() == std::vector<double>{1, 3, 2, 0, 1, 2});
  ops::ValuesIndices bottom = ops::topk(x, 2, false);
  CHECK(bottom.values.to_vector() == std::vector<double>{0, 1, -1, 2});
  CHECK(bottom.indices.to_vector() == std::vector<double>{4, 0, 3, 4});
  REQUIRE_THROWS_WITH(ops::topk(x, 6), Contains("k = 6") && Contains("[2, 5]"));

  // Random rows, strided input, against a full sort.
  Tensor r = random_tensor({4, 3, 11}, DType::Float64, 13, 1);
  ops::ValuesIndices t = ops::topk(r, 4);
  REQUIRE(t.values.shape() == Shape{4, 3, 4});
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 3; ++b) {
      std::vector<int64_t> order(11);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return r.at({a, b, i}) > r.at({a, b, j}); });
      for (int64_t k = 0; k < 4; ++k) {
        CHECK(t.indices.at({a, b, k}) == order[size_t(k)]);
        CHECK(t.values.at({a, b, k}) == r.at({a, b, order[size_t(k)]}));
      }
    }
}

TEST_CASE("gather_last picks one element per row") {
  Tensor x = random_tensor({2, 3, 4}, DType::Float32, 15, 1);
  Tensor idx = from_vector<int64_t>({3, 0, 1, 2, 2, 0}, {2, 3});
  Tensor out = ops::gather_last(x, idx);
  REQUIRE(out.shape() == Shape{2, 3});
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b) CHECK(out.at({a, b}) == x.at({a, b, int64_t(idx.at({a, b}))}));
  REQUIRE_THROWS_WITH(ops::gather_last(x, from_vector<int64_t>({4, 0, 0, 0, 0, 0}, {2, 3})), Contains("index 4") && Contains("[0, 4)"));
  REQUIRE_THROWS_WITH(ops::gather_last(x, zeros({3}, DType::Int64)), Contains("[3]") && Contains("[2, 3, 4]"));
}
