// Tests for nn/exponential_moving_average: the average against a plain double-precision
// reference of θ̄ ← d·θ̄ + (1 − d)·θ over several changing steps (and the copy before
// --ema-start-update), the averaged state dict under tied names, the round trip of the
// trained weights through a checkpoint's optimizer entries, and the validation scope.
#include <catch.hpp>

#include <cmath>
#include <map>

#include "nn/exponential_moving_average.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::nn;
using Catch::Matchers::Contains;

namespace {

using attn::test::wave;

std::vector<float> values_of(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

NamedTensors two_parameters() {
  return {{"encoder.w", from_vector<float>(wave(12, 0.37, 0.1), {3, 4})},
          {"big", from_vector<float>(wave(40000, 0.013, 0.5), {200, 200})}};
}

// What an optimizer step would do: θ changes to a new wave.
void change(const NamedTensors& params, int step) {
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i].second;
    p.copy_(from_vector<float>(wave(p.numel(), 0.5 + 0.2 * double(i), 0.4 * step), p.shape()));
  }
}

}  // namespace

TEST_CASE("ema: the average follows θ̄ ← d·θ̄ + (1 − d)·θ, and copies θ when asked", "[ema]") {
  const NamedTensors params = two_parameters();
  const double d = 0.9;
  ExponentialMovingAverage ema(params, d);
  std::vector<std::vector<double>> reference;
  for (const auto& [name, p] : params) {
    const std::vector<float> v = values_of(p);
    reference.emplace_back(v.begin(), v.end());
  }
  const auto check = [&] {
    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<float> got = values_of(ema.averages()[i]);
      double worst = 0.0;
      for (size_t k = 0; k < got.size(); ++k) worst = std::max(worst, std::abs(double(got[k]) - reference[i][k]));
      CHECK(worst < 1e-6);
    }
  };
  check();  // starts as a copy
  for (int step = 1; step <= 5; ++step) {
    change(params, step);
    const bool copy = step == 3;  // as before --ema-start-update
    ema.update(copy);
    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<float> theta = values_of(params[i].second);
      for (size_t k = 0; k < theta.size(); ++k)
        reference[i][k] = copy ? double(theta[k]) : d * reference[i][k] + (1.0 - d) * double(theta[k]);
    }
    check();
  }
  CHECK(values_of(ema.averages()[0]) != values_of(params[0].second));
  CHECK_THROWS_WITH(ExponentialMovingAverage(params, 1.0), Contains("--ema-decay"));
}

TEST_CASE("ema: the averaged state dict replaces every name of a parameter, tied ones too, and keeps buffers",
          "[ema]") {
  const NamedTensors params = two_parameters();
  ExponentialMovingAverage ema(params, 0.5);
  change(params, 1);
  ema.update();
  const Tensor buffer = from_vector<float>({1.f, 2.f}, {2});
  const NamedTensors state = {{"encoder.w", params[0].second}, {"decoder.w", params[0].second},
                              {"big", params[1].second}, {"version", buffer}};
  const NamedTensors averaged = ema.averaged_state_dict(state);
  REQUIRE(averaged.size() == 4);
  CHECK(averaged[0].second.shares_storage(ema.averages()[0]));
  CHECK(averaged[1].second.shares_storage(ema.averages()[0]));
  CHECK(averaged[2].second.shares_storage(ema.averages()[1]));
  CHECK(averaged[3].second.shares_storage(buffer));
  CHECK(averaged[1].first == "decoder.w");
}

TEST_CASE("ema: a checkpoint's weights (θ̄) and optimizer entries (θ) restore both exactly", "[ema]") {
  const NamedTensors params = two_parameters();
  ExponentialMovingAverage ema(params, 0.8);
  for (int step = 1; step <= 3; ++step) {
    change(params, step);
    ema.update();
  }
  std::map<std::string, Tensor> optimizer_file;
  for (const auto& [name, t] : ema.trained_state()) optimizer_file.emplace(name, t.clone());
  CHECK(ExponentialMovingAverage::holds_trained_state(optimizer_file));
  CHECK(optimizer_file.count("trained.encoder.w") == 1);
  const std::vector<float> average0 = values_of(ema.averages()[0]), trained0 = values_of(params[0].second);

  // A fresh run: its model loads the weights file (the averages), then restore() splits them.
  const NamedTensors fresh = two_parameters();
  for (size_t i = 0; i < fresh.size(); ++i) Tensor(fresh[i].second).copy_(ema.averages()[i]);
  ExponentialMovingAverage resumed(fresh, 0.8);
  resumed.restore(optimizer_file);
  CHECK(values_of(resumed.averages()[0]) == average0);
  CHECK(values_of(fresh[0].second) == trained0);

  std::map<std::string, Tensor> incomplete = optimizer_file;
  incomplete.erase("trained.big");
  CHECK_THROWS_WITH(resumed.restore(incomplete), Contains("trained.big"));
  CHECK_FALSE(ExponentialMovingAverage::holds_trained_state({{"state.big.exp_avg", fresh[1].second}}));
}

TEST_CASE("ema: the validation scope puts θ̄ in the parameters and θ back", "[ema]") {
  const NamedTensors params = two_parameters();
  ExponentialMovingAverage ema(params, 0.5);
  change(params, 1);
  ema.update();
  const std::vector<float> trained = values_of(params[1].second), average = values_of(ema.averages()[1]);
  REQUIRE(trained != average);
  {
    AveragedWeightsScope scope(ema);
    CHECK(values_of(params[1].second) == average);
  }
  CHECK(values_of(params[1].second) == trained);
}
