// The kernels of the training step (core/ops_update.hpp, core/cpu/parameter_update.cpp):
// the Adam and NAG updates equal, bit for bit, the Eigen array expressions nn/adam.cpp and
// nn/nag.cpp evaluated before the updates became kernels (kept here as the reference: a
// plain scalar loop may differ in the last bit where the compiler contracts a·b + c into a
// fused multiply-add); the float64 sum of squares matches a double reference at every thread count;
// scaling raises the non-finite flag exactly when a result is inf or NaN; bad tensors are
// rejected with a message naming them.
#include <catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/cpu/eigen.hpp"
#include "core/ops_update.hpp"
#include "core/threads.hpp"
#include "test_support.hpp"

using namespace attn;
using Catch::Matchers::Contains;

namespace {

// 50,000 elements: several blocks, spread over threads.
constexpr int64_t kSize = 50000;

using attn::test::wave;

Tensor tensor(const std::vector<float>& v) { return from_vector<float>(v, Shape{int64_t(v.size())}); }
std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }
using FloatArray = Eigen::Map<Eigen::ArrayXf>;

std::vector<float> squares(const std::vector<float>& v) {
  std::vector<float> out;
  for (float x : v) out.push_back(x * x);
  return out;
}

}  // namespace

TEST_CASE("adam_update_ is bit-identical to the update before it became a kernel", "[update]") {
  for (const bool decays : {false, true}) {
    const AdamUpdate u{.beta1 = 0.9f, .beta2 = 0.98f, .one_minus_beta1 = 0.1f, .one_minus_beta2 = 0.02f,
                       .eps = 1e-8f, .decay = decays ? -1e-5f : 0.0f, .neg_step_size = -7e-4f, .decays = decays};
    std::vector<float> theta = wave(kSize, 0.013, 0.5), g = wave(kSize, 0.7, 0.3, 0.5);
    std::vector<float> m = wave(kSize, 0.21, 1.0, 0.1), v = squares(wave(kSize, 0.05, 2.0, 0.2));
    const Tensor param = tensor(theta), grad = tensor(g), exp_avg = tensor(m), exp_avg_sq = tensor(v);
    for (int step = 0; step < 3; ++step) {
      ops::adam_update_({{param, grad, exp_avg, exp_avg_sq, u}});
      FloatArray theta_ref(theta.data(), kSize), m_ref(m.data(), kSize), v_ref(v.data(), kSize);
      FloatArray g_ref(g.data(), kSize);
      m_ref = u.beta1 * m_ref + u.one_minus_beta1 * g_ref;
      v_ref = u.beta2 * v_ref + u.one_minus_beta2 * g_ref.square();
      if (decays) theta_ref += u.decay * theta_ref;
      theta_ref += u.neg_step_size * (m_ref / (v_ref.sqrt() + u.eps));
    }
    CHECK(values(param) == theta);
    CHECK(values(exp_avg) == m);
    CHECK(values(exp_avg_sq) == v);
  }
}

TEST_CASE("nag_update_ is bit-identical to the update before it became a kernel", "[update]") {
  for (const bool decays : {false, true}) {
    const NagUpdate u{.shrink = decays ? 0.9999f : 1.0f, .buffer_to_param = 0.97f, .grad_to_param = -0.0199f,
                      .buffer_decay = 0.985f, .grad_to_buffer = -0.01f, .decays = decays};
    std::vector<float> theta = wave(kSize, 0.013, 0.5), g = wave(kSize, 0.7, 0.3, 0.5);
    std::vector<float> b = wave(kSize, 0.3, 0.1, 0.01);
    const Tensor param = tensor(theta), grad = tensor(g), buffer = tensor(b);
    for (int step = 0; step < 3; ++step) {
      ops::nag_update_({{param, grad, buffer, u}});
      FloatArray theta_ref(theta.data(), kSize), b_ref(b.data(), kSize), g_ref(g.data(), kSize);
      if (decays) theta_ref *= u.shrink;
      theta_ref += u.buffer_to_param * b_ref;
      theta_ref += u.grad_to_param * g_ref;
      b_ref = u.buffer_decay * b_ref + u.grad_to_buffer * g_ref;
    }
    CHECK(values(param) == theta);
    CHECK(values(buffer) == b);
  }
}

TEST_CASE("a group update equals the updates of its tensors one at a time", "[update]") {
  // Sizes of many blocks, of one, of none; each parameter with its own step size.
  const std::vector<int64_t> sizes = {kSize, 3, 0, 4097};
  std::vector<AdamTensors> group, alone;
  std::vector<NagTensors> nag_group, nag_alone;
  for (size_t t = 0; t < sizes.size(); ++t) {
    const AdamUpdate u{.beta1 = 0.9f, .beta2 = 0.98f, .one_minus_beta1 = 0.1f, .one_minus_beta2 = 0.02f,
                       .eps = 1e-8f, .decay = -1e-5f, .neg_step_size = -7e-4f * float(t + 1), .decays = t == 1};
    const Tensor theta = tensor(wave(sizes[t], 0.013, 0.5)), g = tensor(wave(sizes[t], 0.7, 0.3 + double(t), 0.5));
    const Tensor m = tensor(wave(sizes[t], 0.21, 1.0, 0.1)), v = tensor(squares(wave(sizes[t], 0.05, 2.0, 0.2)));
    group.push_back({theta, g, m, v, u});
    alone.push_back({theta.clone(), g, m.clone(), v.clone(), u});
    const NagUpdate n{.shrink = 0.9999f, .buffer_to_param = 0.97f, .grad_to_param = -0.0199f * float(t + 1),
                      .buffer_decay = 0.985f, .grad_to_buffer = -0.01f, .decays = t == 0};
    nag_group.push_back({theta.clone(), g, m.clone(), n});
    nag_alone.push_back({theta.clone(), g, m.clone(), n});
  }
  ops::adam_update_(group);
  ops::nag_update_(nag_group);
  for (size_t t = 0; t < sizes.size(); ++t) {
    ops::adam_update_({alone[t]});
    ops::nag_update_({nag_alone[t]});
    CHECK(values(group[t].param) == values(alone[t].param));
    CHECK(values(group[t].exp_avg) == values(alone[t].exp_avg));
    CHECK(values(group[t].exp_avg_sq) == values(alone[t].exp_avg_sq));
    CHECK(values(nag_group[t].param) == values(nag_alone[t].param));
    CHECK(values(nag_group[t].buffer) == values(nag_alone[t].buffer));
  }
  // The sum of squares of a group adds each tensor's sum in order.
  const Tensor together = zeros(Shape{}, DType::Float64), in_turn = zeros(Shape{}, DType::Float64);
  std::vector<Tensor> grads;
  for (const AdamTensors& t : group) grads.push_back(t.grad);
  ops::add_sum_of_squares_(together, grads);
  for (const Tensor& g : grads) ops::add_sum_of_squares_(in_turn, {g});
  CHECK(together.item() == in_turn.item());
}

TEST_CASE("add_sum_of_squares_ accumulates in float64, the same at every thread count", "[update]") {
  const std::vector<float> x = wave(100000, 0.011, 0.2, 3.0);  // several chunks of 2^15
  double reference = 0.25;
  for (float v : x) reference += double(v) * double(v);
  std::vector<double> totals;
  const int threads = get_num_threads();
  for (int n : {1, 2}) {
    set_num_threads(n);
    const Tensor total = full(Shape{}, 0.25, DType::Float64);
    ops::add_sum_of_squares_(total, {tensor(x)});
    totals.push_back(total.item());
  }
  set_num_threads(threads);
  CHECK(totals[0] == totals[1]);
  CHECK(std::abs(totals[0] - reference) <= 1e-12 * reference);
}

TEST_CASE("scale_ multiplies in place and raises the flag only on inf or NaN", "[update]") {
  const Tensor x = tensor({1.0f, -2.0f, 3.0e30f});
  const Tensor flag = zeros(Shape{});
  ops::scale_({x}, 0.5, flag);
  CHECK(values(x) == std::vector<float>{0.5f, -1.0f, 1.5e30f});
  CHECK(flag.item() == 0.0);
  ops::scale_({x}, 1e10, flag);  // 1.5e40 overflows float32
  CHECK(std::isinf(values(x)[2]));
  CHECK(flag.item() == 1.0);
  ops::scale_({tensor({1.0f})}, 2.0, flag);  // a later finite tensor does not lower it
  CHECK(flag.item() == 1.0);

  const Tensor nan = tensor({std::numeric_limits<float>::quiet_NaN()});
  const Tensor flag2 = zeros(Shape{});
  ops::scale_({nan}, 1.0, flag2);
  CHECK(flag2.item() == 1.0);
  ops::scale_({nan}, 1.0);  // without a flag: nothing to report

  // Large groups take the vectorized, threaded path: one bad element among 100,000 raises it.
  const int threads = get_num_threads();
  for (int n : {1, 2})
    for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::quiet_NaN()}) {
      set_num_threads(n);
      std::vector<float> big(100000, 1.0f);
      big[77777] = bad;
      const Tensor finite = full({70000}, 2.0), flag3 = zeros(Shape{});
      ops::scale_({finite}, 0.5, flag3);
      CHECK(flag3.item() == 0.0);
      ops::scale_({finite, tensor(big)}, 0.5, flag3);
      CHECK(flag3.item() == 1.0);
    }
  set_num_threads(threads);
}

TEST_CASE("the update ops name the tensor that does not fit", "[update]") {
  const Tensor p = zeros({4}), g = zeros({4}), wrong = zeros({5}), doubles = zeros({4}, DType::Float64);
  const AdamUpdate adam{};
  CHECK_THROWS_WITH(ops::adam_update_({{p, g, p, p, adam}, {p, g, wrong, p, adam}}), Contains("exp_avg is [5]"));
  CHECK_THROWS_WITH(ops::nag_update_({{p, doubles, p, NagUpdate{}}}), Contains("gradient must be contiguous float32"));
  CHECK_THROWS_WITH(ops::add_sum_of_squares_(zeros(Shape{}), {p}), Contains("the total must be a 0-d float64"));
  CHECK_THROWS_WITH(ops::scale_({p}, 2.0, zeros({1})), Contains("the non-finite flag must be a 0-d float32"));
  CHECK_THROWS_WITH(ops::scale_({p, zeros({4, 2}).transpose(0, 1)}, 2.0), Contains("input must be contiguous float32"));
}
