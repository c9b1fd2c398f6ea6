// Optimizer: updates a fixed list of named float32 parameters from their gradients
// (attn::grad(p)), as fairseq's optimizers do (docs/models.md §1.7). Adam and NAG derive
// from it (nn/adam.hpp, nn/nag.hpp).
//
// * The learning rate is set from outside before each step (the schedule, §1.8).
// * step() updates every parameter that has a gradient and skips the others, as fairseq
//   does for `p.grad is None`.
// * Per-parameter state ("slots": Adam's moments, NAG's momentum buffer) is allocated once
//   in the constructor, on the parameter's device; a step allocates nothing (it reads
//   contiguous gradients in place).
// * The update of all parameters is one group kernel of the parameters' device
//   (core/ops_update.hpp), so a step runs wherever the model lives, in a few launches, and
//   reads nothing back.
// * state_dict() returns the full state as tensors (float32 slots, exact integer and float64
//   scalars), named "state.<param name>.<slot>", so a checkpoint resume continues
//   bit-identically; load_state_dict() checks every name, dtype and shape.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace attn::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// The name of a parameter's state entry `what` (a slot, or Adam's "step") in state_dict():
// "state.<param name>.<what>".
std::string optimizer_state_key(const std::string& param_name, const std::string& what);

class Optimizer {
 public:
  // params: name and handle of each trainable parameter (e.g. Module::named_parameters()).
  // slot_names: the per-parameter state tensors the derived optimizer keeps (zero at start).
  Optimizer(NamedTensors params, std::vector<std::string> slot_names);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual std::string name() const = 0;
  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }

  // One update of every parameter that has a gradient, each gradient read as grad·grad_scale
  // (the factor of nn::scaled_grad_norm: the step's normalisation and clipping).
  void step(double grad_scale = 1.0);
  // Clears the gradients of all parameters.
  void zero_grad();
  const NamedTensors& params() const { return params_; }

  NamedTensors state_dict() const;
  // Throws attn::Error naming the missing or mismatched entry.
  void load_state_dict(const std::map<std::string, Tensor>& state);

 protected:
  // One parameter, its contiguous float32 gradient and its slots.
  struct ParamData {
    size_t index;
    const Tensor& param;
    const Tensor& grad;
    const std::vector<Tensor>& slots;  // in the order of slot_names
  };
  // One update of every parameter that has a gradient (all of them in one group kernel), each
  // gradient read as grad·grad_scale.
  virtual void update(const std::vector<ParamData>& params, float grad_scale) = 0;
  // Scalars beyond the slots (step counts, lr_old), as 0-d tensors.
  virtual NamedTensors extra_state() const { return {}; }
  virtual void load_extra_state(const std::map<std::string, Tensor>& state) {}

  // "state.<param name>.<what>"
  std::string state_key(size_t param_index, const std::string& what) const;
  // The entry `key` of `state`, checked to be a `dtype` tensor of `shape`.
  static const Tensor& find_state(const std::map<std::string, Tensor>& state, const std::string& key, DType dtype,
                                  const Shape& shape);

 private:
  NamedTensors params_;
  std::vector<std::string> slot_names_;
  std::vector<std::vector<Tensor>> slots_;  // [param][slot]
  double lr_ = 0.0;
};

}  // namespace attn::nn
