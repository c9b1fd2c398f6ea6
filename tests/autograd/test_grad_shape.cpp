// Gradients of cat, stack, split and chunk (autograd/ops_shape.cpp), along outer, inner
// and negative dims, with non-contiguous inputs and unequal piece sizes.
#include <catch.hpp>

#include "grad_test_util.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

// Pieces weighted differently so that a piece's gradient landing in the wrong place shows.
Tensor weighted_total(const std::vector<Tensor>& pieces) {
  Tensor total = sum(pieces[0]);
  for (size_t i = 1; i < pieces.size(); ++i) total = total + sum(pieces[i] * pieces[i]) * double(i + 1);
  return total;
}

}  // namespace

TEST_CASE("cat along each dim") {
  for (int64_t dim : {0, 1, -1}) {
    auto f = [dim](const std::vector<Tensor>& in) { return cat(in, dim); };
    check_gradients(f, {leaf({2, 3}, 161), leaf({2, 3}, 162), transposed_leaf({2, 3}, 163)});
  }
  auto f = [](const std::vector<Tensor>& in) { return cat(in, 1); };
  check_gradients(f, {leaf({2, 1}, 164), strided_leaf({2, 3}, 165)});
}

TEST_CASE("stack along each dim") {
  for (int64_t dim : {0, 1, 2, -1}) {
    auto f = [dim](const std::vector<Tensor>& in) { return stack(in, dim); };
    check_gradients(f, {leaf({2, 3}, 166), transposed_leaf({2, 3}, 167)});
  }
}

TEST_CASE("split and chunk, with uneven last pieces") {
  for (int64_t dim : {0, 1, -1}) {
    auto by_size = [dim](const std::vector<Tensor>& in) { return weighted_total(split(in[0], 2, dim)); };
    auto by_count = [dim](const std::vector<Tensor>& in) { return weighted_total(chunk(in[0], 2, dim)); };
    check_gradients(by_size, {leaf({5, 3}, 168)});
    check_gradients(by_size, {transposed_leaf({5, 3}, 169)});
    check_gradients(by_count, {leaf({3, 5}, 170)});
  }
}

TEST_CASE("split pieces can be used alone, several times, or not at all") {
  Tensor x = leaf({6}, 171);
  std::vector<Tensor> parts = chunk(x, 3, 0);
  REQUIRE(parts.size() == 3);
  backward(sum(parts[1]) + sum(parts[1]) * 2.0);
  CHECK(values(grad(x)) == std::vector<double>{0, 0, 3, 3, 0, 0});
}
