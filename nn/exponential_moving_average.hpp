// The exponential moving average of a model's parameters (Polyak averaging with exponential
// weights; fairseq's --ema-decay, Marian's --exponential-smoothing; docs/models.md §1.11.1).
// After every update
//
//   θ̄ ← d·θ̄ + (1 − d)·θ          (θ̄ ← θ for the updates before --ema-start-update)
//
// in float32 per element (fairseq's EMA computes θ̄.mul_(d).add_(θ, alpha=1 − d): the same up
// to rounding). θ̄ weighs the last ~1/(1 − d) updates, as averaging the last checkpoints does,
// but over every update. The averages live on the parameters' device and a step is one group
// kernel of that device (core/ops_update.hpp moving_average_): no allocation, a few launches.
//
// In a checkpoint (apps/training/trainer.hpp) the weights file holds θ̄ — what generate,
// translate, average and inspect read — and the optimizer file holds θ itself under
// "trained.<parameter name>" beside the optimizer's state, so a resume continues exactly.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/parameter_groups.hpp"
#include "nn/optimizer.hpp"

namespace attn::nn {

class ExponentialMovingAverage {
 public:
  // params: the trained parameters (Module::named_parameters()); θ̄ starts as their copy.
  // decay: d, in (0, 1).
  ExponentialMovingAverage(NamedTensors params, double decay);

  // One step after an update: θ̄ ← d·θ̄ + (1 − d)·θ, or θ̄ ← θ when `copy`.
  void update(bool copy = false);
  double decay() const { return decay_; }
  const std::vector<Tensor>& averages() const { return averages_; }
  const NamedTensors& params() const { return params_; }

  // `state` (a module's state_dict()) with every entry that is one of the parameters — under
  // each name it has, tied ones too — replaced by its average; buffers stay as they are.
  NamedTensors averaged_state_dict(const NamedTensors& state) const;
  // θ under the names a checkpoint's optimizer file keeps them: "trained.<parameter name>".
  NamedTensors trained_state() const;
  // Whether an optimizer file holds trained_state() entries (a checkpoint of an EMA run).
  static bool holds_trained_state(const std::map<std::string, Tensor>& optimizer_file);
  // Resumes from a checkpoint of an EMA run whose weights file (the averages) has been
  // loaded into the parameters: θ̄ ← those values, θ ← the optimizer file's "trained.*".
  // Throws attn::Error naming a missing or mismatched entry before changing anything.
  void restore(const std::map<std::string, Tensor>& optimizer_file);

 private:
  NamedTensors params_;
  std::vector<Tensor> averages_;
  std::vector<AverageTensors> pairs_;  // (θ̄, θ) of each parameter, for the group kernel
  double decay_;
};

// Puts θ̄ in the parameters for the scope's life (validating the averaged weights) and θ back
// at its end.
class AveragedWeightsScope {
 public:
  explicit AveragedWeightsScope(const ExponentialMovingAverage& ema);
  ~AveragedWeightsScope();
  AveragedWeightsScope(const AveragedWeightsScope&) = delete;
  AveragedWeightsScope& operator=(const AveragedWeightsScope&) = delete;

 private:
  const ExponentialMovingAverage& ema_;
  std::vector<Tensor> trained_;
};

}  // namespace attn::nn
