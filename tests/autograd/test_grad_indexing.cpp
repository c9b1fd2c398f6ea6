// Gradients of embedding and index_select (autograd/ops_indexing.cpp): repeated indices
// accumulate, padding_idx rows get no gradient, index_select along inner dims.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

Tensor indices(const std::vector<int64_t>& v, const Shape& shape) { return from_vector<int64_t>(v, shape); }

}  // namespace

TEST_CASE("embedding: gradcheck with repeated indices and 2-D index tensors") {
  Tensor ids = indices({0, 3, 3, 1, 4, 0}, {2, 3});
  auto f = [ids](const std::vector<Tensor>& in) { return embedding(in[0], ids); };
  check_gradients(f, {leaf({5, 2}, 181)});
  check_gradients(f, {transposed_leaf({5, 2}, 182)});
}

TEST_CASE("embedding: rows are scatter-added and padding_idx rows get none") {
  Tensor weight = leaf({4, 2}, 183);
  Tensor ids = indices({2, 1, 2, 0}, {4});
  Tensor out = embedding(weight, ids, /*padding_idx=*/1);
  CHECK(out.at({1, 0}) == weight.at({1, 0}));  // the padding row is still looked up
  backward(sum(out));
  CHECK(values(grad(weight)) == std::vector<double>{1, 1, 0, 0, 2, 2, 0, 0});
}

TEST_CASE("embedding rejects out-of-range indices") {
  Tensor weight = leaf({4, 2}, 184);
  CHECK_THROWS_AS(embedding(weight, indices({0, 4}, {2})), Error);
  CHECK_THROWS_AS(embedding(weight, indices({0}, {1}), 7), Error);
}

TEST_CASE("index_select along each dim") {
  Tensor ids = indices({2, 0, 2}, {3});
  for (int64_t dim : {0, 1, 2, -1}) {
    auto f = [ids, dim](const std::vector<Tensor>& in) { return index_select(in[0], dim, ids); };
    check_gradients(f, {leaf({3, 3, 3}, 185)});
    check_gradients(f, {transposed_leaf({3, 3, 3}, 186)});
  }
  Tensor x = leaf({3, 2}, 187);
  backward(sum(index_select(x, 0, ids)));
  CHECK(values(grad(x)) == std::vector<double>{1, 1, 0, 0, 2, 2});
}
