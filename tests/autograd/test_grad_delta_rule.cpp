// The differentiable delta rule (autograd/fused/delta_rule.hpp): finite-difference gradchecks
// in float64 of queries, keys, values and write strengths over two backward chunks, and
// values and gradients equal to the recurrence written step by step with plain ops.
#include <catch.hpp>

#include "autograd/fused/delta_rule.hpp"
#include "grad_test_util.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::testing;

namespace {

// u = β (v − W k), W ← W + u kᵀ, y = W q, one plain op at a time.
Tensor stepwise(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta) {
  Tensor w = zeros({q.size(0), v.size(2), q.size(2)}, q.dtype());
  std::vector<Tensor> ys;
  for (int64_t t = 0; t < q.size(1); ++t) {
    const Tensor kt = select(k, 1, t);
    const Tensor recalled = sum(mul(w, unsqueeze(kt, 1)), {2});                            // [R, N]
    const Tensor u = mul(unsqueeze(select(beta, 1, t), 1), sub(select(v, 1, t), recalled));  // [R, N]
    w = add(w, mul(unsqueeze(u, 2), unsqueeze(kt, 1)));
    ys.push_back(sum(mul(w, unsqueeze(select(q, 1, t), 1)), {2}));
  }
  return stack(ys, 1);
}

}  // namespace

TEST_CASE("delta_rule gradcheck in float64 (q, k, v, beta; two chunks)") {
  check_gradients([](const std::vector<Tensor>& in) { return delta_rule(in[0], in[1], in[2], in[3]); },
                  {leaf({2, 70, 2}, 81, -0.5, 0.5), leaf({2, 70, 2}, 82, -0.5, 0.5), leaf({2, 70, 2}, 83),
                   leaf({2, 70}, 84, 0.05, 1.0)});
}

TEST_CASE("delta_rule equals the step-by-step plain-ops recurrence in value and gradient") {
  auto inputs = [] {
    return std::vector<Tensor>{leaf({2, 6, 3}, 91), leaf({2, 6, 3}, 92), leaf({2, 6, 4}, 93), leaf({2, 6}, 94, 0.0, 1.0)};
  };
  check_same_as_plain_ops([](const std::vector<Tensor>& in) { return delta_rule(in[0], in[1], in[2], in[3]); },
                          [](const std::vector<Tensor>& in) { return stepwise(in[0], in[1], in[2], in[3]); }, inputs(),
                          inputs(), leaf({2, 6, 4}, 95));
}
