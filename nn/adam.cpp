// Adam with fairseq's semantics (docs/models.md §1.7). See adam.hpp.
#include "nn/adam.hpp"

#include <cmath>

#include "core/ops_update.hpp"

namespace attn::nn {
namespace {
enum Slot { kExpAvg = 0, kExpAvgSq = 1 };
}

Adam::Adam(NamedTensors params, const AdamOptions& options)
    : Optimizer(std::move(params), {"exp_avg", "exp_avg_sq"}), options_(options), steps_(this->params().size(), 0) {
  ATTN_CHECK(options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1,
             "adam: betas must lie in [0, 1), got ({}, {})", options.beta1, options.beta2);
  ATTN_CHECK(options.eps > 0, "adam: eps must be > 0, got {}", options.eps);
  ATTN_CHECK(options.weight_decay >= 0, "adam: weight decay must be >= 0, got {}", options.weight_decay);
}

void Adam::update(const std::vector<ParamData>& params, float grad_scale) {
  std::vector<AdamTensors> group;
  group.reserve(params.size());
  for (const ParamData& p : params) {
    const int64_t t = ++steps_[p.index];
    const double bias_correction1 = 1.0 - std::pow(options_.beta1, double(t));
    const double bias_correction2 = 1.0 - std::pow(options_.beta2, double(t));
    const AdamUpdate update{.beta1 = float(options_.beta1),
                            .beta2 = float(options_.beta2),
                            .one_minus_beta1 = float(1.0 - options_.beta1),
                            .one_minus_beta2 = float(1.0 - options_.beta2),
                            .eps = float(options_.eps),
                            .decay = float(-options_.weight_decay * lr()),
                            .neg_step_size = float(-lr() * std::sqrt(bias_correction2) / bias_correction1),
                            .decays = options_.weight_decay != 0.0,
                            .grad_scale = grad_scale};
    group.push_back({p.param, p.grad, p.slots[kExpAvg], p.slots[kExpAvgSq], update});
  }
  ops::adam_update_(group);
}

NamedTensors Adam::extra_state() const {
  NamedTensors state;
  for (size_t i = 0; i < steps_.size(); ++i)
    state.emplace_back(state_key(i, "step"), from_vector<int64_t>({steps_[i]}, Shape{}));
  return state;
}

void Adam::load_extra_state(const std::map<std::string, Tensor>& state) {
  std::vector<int64_t> steps(steps_.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string key = state_key(i, "step");
    steps[i] = *find_state(state, key, DType::Int64, Shape{}).data<int64_t>();
    ATTN_CHECK(steps[i] >= 0, "optimizer state: '{}' is negative ({})", key, steps[i]);
  }
  steps_ = std::move(steps);
}

}  // namespace attn::nn
