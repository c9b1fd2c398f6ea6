// Tests for nn/optimizer, nn/adam and nn/nag: each against a plain double-precision
// reference of the formulas in docs/models.md §1.7 over several steps with a changing lr,
// hand-computed first steps, and a state round trip through a safetensors file that
// continues bit-identically.
#include <catch.hpp>

#include <cmath>
#include <functional>

#include "autograd/autograd.hpp"
#include "core/safetensors.hpp"
#include "nn/adam.hpp"
#include "nn/nag.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::nn;
using Catch::Matchers::Contains;

namespace {

using attn::test::wave;

Tensor parameter(const std::vector<float>& values, const Shape& shape) {
  Tensor p = from_vector<float>(values, shape);
  set_requires_grad(p);
  return p;
}

std::vector<float> values_of(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }
std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The gradient of parameter `param` at step `step` (1-based).
std::vector<float> gradient(int64_t n, int param, int step) { return wave(n, 0.7 + 0.1 * param, 0.3 * step, 0.5); }

const std::vector<double> kLrs = {1e-2, 8e-3, 5e-3, 5e-3, 2e-3, 1e-3};

struct Model {
  NamedTensors params;
  Model() {
    params.emplace_back("encoder.w", parameter(wave(12, 0.37, 0.1), {3, 4}));
    params.emplace_back("encoder.b", parameter(wave(5, 1.1, 2.0), {5}));
    params.emplace_back("big", parameter(wave(40000, 0.013, 0.5), {200, 200}));  // the multithreaded path
  }
  void set_grads(int step) {
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor& p = params[i].second;
      set_grad(p, from_vector<float>(gradient(p.numel(), int(i), step), p.shape()));
    }
  }
};

// Reference optimizers over doubles: one update of θ with gradient g at learning rate lr.
struct ReferenceAdam {
  double beta1, beta2, eps, wd;
  std::vector<double> m, v;
  int64_t t = 0;
  void step(std::vector<double>& theta, const std::vector<double>& g, double lr) {
    if (m.empty()) m.assign(theta.size(), 0.0), v.assign(theta.size(), 0.0);
    ++t;
    const double alpha = lr * std::sqrt(1 - std::pow(beta2, double(t))) / (1 - std::pow(beta1, double(t)));
    for (size_t i = 0; i < theta.size(); ++i) {
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      theta[i] -= lr * wd * theta[i];
      theta[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
    }
  }
};

struct ReferenceNAG {
  double mu, wd;
  std::vector<double> b;
  void step(std::vector<double>& theta, const std::vector<double>& g, double lr, double lr_old) {
    if (b.empty()) b.assign(theta.size(), 0.0);
    const double r = lr / lr_old;
    for (size_t i = 0; i < theta.size(); ++i) {
      theta[i] = theta[i] * (1 - lr * wd);
      theta[i] += mu * mu * r * b[i] - (1 + mu) * lr * g[i];
      b[i] = mu * r * b[i] - lr * g[i];
    }
  }
};

void check_close(const std::vector<float>& got, const std::vector<double>& expected, double tolerance) {
  REQUIRE(got.size() == expected.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
  CHECK(worst <= tolerance);
}

// Runs `steps` steps [first, first + steps) of `opt` on `model` with the lrs of kLrs.
void run(Optimizer& opt, Model& model, int first, int steps) {
  for (int s = first; s < first + steps; ++s) {
    model.set_grads(s);
    opt.set_lr(kLrs[size_t(s - 1)]);
    opt.step();
  }
}

std::map<std::string, Tensor> through_file(const NamedTensors& state) {
  test::TempDir tmp;
  const std::string path = tmp.file("state.safetensors");
  save_safetensors(path, state);
  SafetensorsFile f = load_safetensors(path);
  return {f.tensors.begin(), f.tensors.end()};
}

// Runs 6 steps straight, and 3 + save/restore into a fresh optimizer + 3: identical bits.
void check_resume_is_identical(const std::function<std::unique_ptr<Optimizer>(Model&)>& make) {
  Model straight_model;
  auto straight = make(straight_model);
  run(*straight, straight_model, 1, 6);

  Model first_model;
  auto first = make(first_model);
  run(*first, first_model, 1, 3);
  const auto saved_state = through_file(first->state_dict());
  const auto saved_params = through_file(first_model.params);

  Model resumed_model;
  for (auto& [name, p] : resumed_model.params) p.copy_(saved_params.at(name));
  auto resumed = make(resumed_model);
  resumed->load_state_dict(saved_state);
  run(*resumed, resumed_model, 4, 3);

  for (size_t i = 0; i < straight_model.params.size(); ++i) {
    INFO(straight_model.params[i].first);
    CHECK(values_of(resumed_model.params[i].second) == values_of(straight_model.params[i].second));
  }
}

}  // namespace

TEST_CASE("adam: the first step moves each weight by about lr against its gradient's sign", "[optimizer]") {
  Tensor p = parameter({1.0f, -2.0f}, {2});
  Adam adam({{"p", p}}, {.beta1 = 0.9, .beta2 = 0.98, .eps = 1e-8});
  set_grad(p, from_vector<float>({0.5f, -1e-3f}, {2}));
  adam.set_lr(0.1);
  adam.step();
  // α·m/(√v + ε) = lr·√0.02·|g| / (√0.02·|g| + ε) per element.
  const double g0 = 0.5, g1 = 1e-3, s = std::sqrt(0.02);
  CHECK(p.at({0}) == Approx(1.0 - 0.1 * s * g0 / (s * g0 + 1e-8)).epsilon(1e-6));
  CHECK(p.at({1}) == Approx(-2.0 + 0.1 * s * g1 / (s * g1 + 1e-8)).epsilon(1e-6));
  CHECK(adam.step_count(0) == 1);
}

TEST_CASE("adam matches the double reference over steps with a changing lr", "[optimizer]") {
  const double wd = GENERATE(0.0, 0.1);
  INFO("weight decay " << wd);
  Model model;
  Adam adam(model.params, {.beta1 = 0.9, .beta2 = 0.98, .eps = 1e-8, .weight_decay = wd});
  std::vector<std::vector<double>> theta;
  std::vector<ReferenceAdam> reference;
  for (const auto& [name, p] : model.params) {
    theta.push_back(as_double(values_of(p)));
    reference.push_back({.beta1 = 0.9, .beta2 = 0.98, .eps = 1e-8, .wd = wd, .m = {}, .v = {}});
  }
  for (int s = 1; s <= 6; ++s) {
    run(adam, model, s, 1);
    for (size_t i = 0; i < theta.size(); ++i)
      reference[i].step(theta[i], as_double(gradient(int64_t(theta[i].size()), int(i), s)), kLrs[size_t(s - 1)]);
  }
  for (size_t i = 0; i < theta.size(); ++i) {
    INFO(model.params[i].first);
    check_close(values_of(model.params[i].second), theta[i], 2e-6);
  }
}

TEST_CASE("adam skips parameters without a gradient and counts steps per parameter", "[optimizer]") {
  Tensor a = parameter({1.0f}, {1}), b = parameter({2.0f}, {1});
  Adam adam({{"a", a}, {"b", b}}, {});
  adam.set_lr(0.1);
  set_grad(a, from_vector<float>({1.0f}, {1}));
  adam.step();
  CHECK(b.item() == 2.0);
  CHECK(adam.step_count(0) == 1);
  CHECK(adam.step_count(1) == 0);
  adam.zero_grad();
  CHECK_FALSE(grad(a).defined());
}

TEST_CASE("nag: the first step is θ − (1+μ)·lr·g", "[optimizer]") {
  Tensor p = parameter({1.0f, 3.0f}, {2});
  NAG nag({{"p", p}}, {.momentum = 0.99});
  set_grad(p, from_vector<float>({0.5f, -2.0f}, {2}));
  nag.set_lr(0.1);
  nag.step();
  CHECK(p.at({0}) == Approx(1.0 - 1.99 * 0.1 * 0.5).epsilon(1e-6));
  CHECK(p.at({1}) == Approx(3.0 + 1.99 * 0.1 * 2.0).epsilon(1e-6));
  // The second step adds μ²·r·b with b = −lr·g and r = lr/lr_old.
  nag.set_lr(0.05);
  set_grad(p, from_vector<float>({0.0f, 0.0f}, {2}));
  nag.step();
  CHECK(p.at({0}) == Approx(1.0 - 1.99 * 0.1 * 0.5 + 0.99 * 0.99 * 0.5 * (-0.1 * 0.5)).epsilon(1e-6));
}

TEST_CASE("nag matches the double reference over steps with a changing lr", "[optimizer]") {
  const double wd = GENERATE(0.0, 0.01);
  INFO("weight decay " << wd);
  Model model;
  NAG nag(model.params, {.momentum = 0.99, .weight_decay = wd});
  std::vector<std::vector<double>> theta;
  std::vector<ReferenceNAG> reference;
  for (const auto& [name, p] : model.params) {
    theta.push_back(as_double(values_of(p)));
    reference.push_back({.mu = 0.99, .wd = wd, .b = {}});
  }
  for (int s = 1; s <= 6; ++s) {
    run(nag, model, s, 1);
    const double lr = kLrs[size_t(s - 1)], lr_old = s == 1 ? lr : kLrs[size_t(s - 2)];
    for (size_t i = 0; i < theta.size(); ++i)
      reference[i].step(theta[i], as_double(gradient(int64_t(theta[i].size()), int(i), s)), lr, lr_old);
  }
  for (size_t i = 0; i < theta.size(); ++i) {
    INFO(model.params[i].first);
    check_close(values_of(model.params[i].second), theta[i], 2e-6);
  }
}

// Gradients multiplied in place by `scale` (in float32, as fairseq's multiply_grads) and a
// plain step, against the raw gradients and step(scale): the same weights bit for bit.
template <typename Opt, typename Options>
void check_step_scale_matches_scaled_gradients(const Options& options) {
  const float scale = 1.0f / 381.0f;
  Model scaled_first, scaled_on_read;
  Opt a(scaled_first.params, options), b(scaled_on_read.params, options);
  for (int s = 1; s <= 3; ++s) {
    scaled_first.set_grads(s);
    scaled_on_read.set_grads(s);
    for (const auto& [name, p] : scaled_first.params) {
      std::vector<float> g = values_of(grad(p));
      for (float& x : g) x *= scale;
      set_grad(p, from_vector<float>(g, p.shape()));
    }
    a.set_lr(kLrs[size_t(s - 1)]);
    b.set_lr(kLrs[size_t(s - 1)]);
    a.step();
    b.step(double(scale));
  }
  for (size_t i = 0; i < scaled_first.params.size(); ++i) {
    INFO(scaled_first.params[i].first);
    CHECK(values_of(scaled_first.params[i].second) == values_of(scaled_on_read.params[i].second));
  }
}

TEST_CASE("a step that scales the gradients as it reads them equals a step on scaled gradients", "[optimizer]") {
  check_step_scale_matches_scaled_gradients<Adam>(AdamOptions{.beta1 = 0.9, .beta2 = 0.98, .weight_decay = 0.01});
  check_step_scale_matches_scaled_gradients<NAG>(NAGOptions{.momentum = 0.99, .weight_decay = 0.01});
}

TEST_CASE("adam state saved to a file and restored continues bit-identically", "[optimizer]") {
  check_resume_is_identical([](Model& m) {
    return std::make_unique<Adam>(m.params, AdamOptions{.beta1 = 0.9, .beta2 = 0.98, .weight_decay = 0.01});
  });
}

TEST_CASE("nag state saved to a file and restored continues bit-identically", "[optimizer]") {
  check_resume_is_identical([](Model& m) { return std::make_unique<NAG>(m.params, NAGOptions{.weight_decay = 0.01}); });
}

TEST_CASE("optimizer state names its parameters and rejects a mismatched state", "[optimizer]") {
  Model model;
  Adam adam(model.params, {});
  NAG nag(model.params, {});
  std::map<std::string, Tensor> adam_state;
  for (const auto& [k, v] : adam.state_dict()) adam_state.emplace(k, v);
  CHECK(adam_state.count("state.encoder.w.exp_avg_sq"));
  CHECK(adam_state.at("state.big.step").dtype() == DType::Int64);
  CHECK_THROWS_WITH(nag.load_state_dict(adam_state), Contains("state.encoder.w.momentum_buffer"));

  auto wrong_shape = adam_state;
  wrong_shape["state.encoder.b.exp_avg"] = zeros({4});
  CHECK_THROWS_WITH(adam.load_state_dict(wrong_shape), Contains("state.encoder.b.exp_avg") && Contains("[4]"));
  auto missing_step = adam_state;
  missing_step.erase("state.big.step");
  CHECK_THROWS_WITH(adam.load_state_dict(missing_step), Contains("state.big.step"));
}

TEST_CASE("optimizers reject parameters they cannot train", "[optimizer]") {
  Tensor f64 = from_vector<double>({1.0}, {1});
  CHECK_THROWS_WITH(Adam({{"x", f64}}, {}), Contains("'x'") && Contains("float64"));
  Tensor p = parameter({1.0f}, {1});
  CHECK_THROWS_WITH(NAG({{"p", p}, {"p", p}}, {}), Contains("'p' is listed twice"));
  CHECK_THROWS_WITH(Adam({{"p", p}}, {.beta1 = 1.0}), Contains("betas"));
  CHECK_THROWS_WITH(NAG({{"p", p}}, {.momentum = -0.5}), Contains("momentum"));
}
