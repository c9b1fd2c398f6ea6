#include "nn/exponential_moving_average.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/ops_update.hpp"

namespace attn::nn {

namespace {

const std::string kTrainedPrefix = "trained.";

}  // namespace

ExponentialMovingAverage::ExponentialMovingAverage(NamedTensors params, double decay)
    : params_(std::move(params)), decay_(decay) {
  ATTN_CHECK(decay > 0.0 && decay < 1.0, "--ema-decay must lie in (0, 1), got {}", decay);
  averages_.reserve(params_.size());
  for (const auto& [name, p] : params_) {
    averages_.push_back(p.clone());
    pairs_.push_back({averages_.back(), p});
  }
}

void ExponentialMovingAverage::update(bool copy) {
  if (copy) {
    for (size_t i = 0; i < params_.size(); ++i) averages_[i].copy_(params_[i].second);
    return;
  }
  ops::moving_average_(pairs_, decay_);  // one group kernel of the parameters' device
}

NamedTensors ExponentialMovingAverage::averaged_state_dict(const NamedTensors& state) const {
  NamedTensors averaged = state;
  for (auto& [name, tensor] : averaged)
    for (size_t i = 0; i < params_.size(); ++i)
      if (tensor.shares_storage(params_[i].second)) tensor = averages_[i];
  return averaged;
}

NamedTensors ExponentialMovingAverage::trained_state() const {
  NamedTensors state;
  for (const auto& [name, p] : params_) state.emplace_back(kTrainedPrefix + name, p);
  return state;
}

bool ExponentialMovingAverage::holds_trained_state(const std::map<std::string, Tensor>& optimizer_file) {
  auto it = optimizer_file.lower_bound(kTrainedPrefix);
  return it != optimizer_file.end() && it->first.starts_with(kTrainedPrefix);
}

void ExponentialMovingAverage::restore(const std::map<std::string, Tensor>& optimizer_file) {
  std::vector<const Tensor*> trained;
  for (const auto& [name, p] : params_) {
    auto it = optimizer_file.find(kTrainedPrefix + name);
    ATTN_CHECK(it != optimizer_file.end(), "optimizer state: no entry '{}' (the trained weights of an --ema-decay run)",
               kTrainedPrefix + name);
    ATTN_CHECK(it->second.dtype() == p.dtype() && it->second.shape() == p.shape(),
               "optimizer state: '{}' is {} {}, expected {} {}", it->first, dtype_name(it->second.dtype()),
               it->second.shape().str(), dtype_name(p.dtype()), p.shape().str());
    trained.push_back(&it->second);
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    averages_[i].copy_(params_[i].second);
    params_[i].second.copy_(*trained[i]);
  }
}

AveragedWeightsScope::AveragedWeightsScope(const ExponentialMovingAverage& ema) : ema_(ema) {
  for (size_t i = 0; i < ema.params().size(); ++i) {
    Tensor p = ema.params()[i].second;  // a handle of the parameter
    trained_.push_back(p.clone());
    p.copy_(ema.averages()[i]);
  }
}

AveragedWeightsScope::~AveragedWeightsScope() {
  for (size_t i = 0; i < trained_.size(); ++i) Tensor(ema_.params()[i].second).copy_(trained_[i]);
}

}  // namespace attn::nn
