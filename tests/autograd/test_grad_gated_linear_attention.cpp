// The differentiable gated linear attention (autograd/fused/gated_linear_attention.hpp):
// finite-difference gradchecks in float64 of queries, keys, values and both gates, over a
// length that spans two backward chunks; and values and gradients equal to the same
// recurrence written step by step with plain ops.
#include <catch.hpp>

#include "autograd/fused/gated_linear_attention.hpp"
#include "grad_test_util.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

// S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k_tᵀ, y_t = S_t q_t, one plain op at a time.
Tensor stepwise(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a, const Tensor& b) {
  Tensor state;
  std::vector<Tensor> ys;
  for (int64_t t = 0; t < q.size(1); ++t) {
    const Tensor write = mul(unsqueeze(select(v, 1, t), 2), unsqueeze(select(k, 1, t), 1));  // [R, N, M]
    if (state.defined()) {
      const Tensor gate = mul(unsqueeze(select(a, 1, t), 2), unsqueeze(select(b, 1, t), 1));
      state = add(mul(gate, state), write);
    } else {
      state = write;
    }
    ys.push_back(sum(mul(state, unsqueeze(select(q, 1, t), 1)), {2}));  // [R, N]
  }
  return stack(ys, 1);
}

}  // namespace

TEST_CASE("gated_linear_attention gradcheck in float64 (q, k, v and both gates; no gates; two chunks)") {
  const int64_t rows = 2, length = 70, features = 2, values = 2;
  const Tensor q = leaf({rows, length, features}, 51), k = leaf({rows, length, features}, 52);
  const Tensor v = leaf({rows, length, values}, 53);
  const Tensor a = leaf({rows, length, values}, 54, 0.05, 1.0), b = leaf({rows, length, features}, 55, 0.05, 1.0);
  check_gradients([](const std::vector<Tensor>& in) { return gated_linear_attention(in[0], in[1], in[2], in[3], in[4]); },
                  {q, k, v, a, b});
  check_gradients([](const std::vector<Tensor>& in) { return gated_linear_attention(in[0], in[1], in[2]); },
                  {leaf({2, 6, 3}, 56), leaf({2, 6, 3}, 57), leaf({2, 6, 4}, 58)});
}

TEST_CASE("gated_linear_attention equals the step-by-step plain-ops recurrence in value and gradient") {
  auto inputs = [] {
    return std::vector<Tensor>{leaf({2, 7, 3}, 61), leaf({2, 7, 3}, 62), leaf({2, 7, 4}, 63),
                               leaf({2, 7, 4}, 64, 0.0, 1.0), leaf({2, 7, 3}, 65, 0.0, 1.0)};
  };
  check_same_as_plain_ops(
      [](const std::vector<Tensor>& in) { return gated_linear_attention(in[0], in[1], in[2], in[3], in[4]); },
      [](const std::vector<Tensor>& in) { return stepwise(in[0], in[1], in[2], in[3], in[4]); }, inputs(), inputs(),
      leaf({2, 7, 4}, 66));
}
