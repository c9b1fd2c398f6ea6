// Adam as fairseq applies it (docs/models.md §1.7; Kingma & Ba 2015, Algorithm 1), with
// weight decay decoupled from the gradient (Loshchilov & Hutter 2019). At step t of a
// parameter θ with gradient g:
//
//   m ← β₁·m + (1−β₁)·g            v ← β₂·v + (1−β₂)·g²
//   α_t = lr · √(1−β₂ᵗ) / (1−β₁ᵗ)
//   θ ← θ − lr·wd·θ                 (only when wd ≠ 0; before the Adam step)
//   θ ← θ − α_t · m / (√v + ε)      (ε added to √v, not to the bias-corrected √v̂)
//
// t counts the steps in which this parameter had a gradient, as fairseq's per-parameter
// state["step"]. Arithmetic is float32 per element, scalars are formed in double.
#pragma once
#include "nn/optimizer.hpp"

namespace attn::nn {

struct AdamOptions {
  double beta1 = 0.9;   // --adam-betas '(β₁, β₂)'; the MT recipes use (0.9, 0.98)
  double beta2 = 0.999;
  double eps = 1e-8;    // --adam-eps
  double weight_decay = 0.0;  // --weight-decay
};

class Adam : public Optimizer {
 public:
  Adam(NamedTensors params, const AdamOptions& options);
  std::string name() const override { return "adam"; }
  // Steps taken so far by parameter `index` (fairseq's state["step"]).
  int64_t step_count(size_t index) const { return steps_[index]; }

 private:
  void update(const std::vector<ParamData>& params, float grad_scale) override;
  NamedTensors extra_state() const override;
  void load_extra_state(const std::map<std::string, Tensor>& state) override;

  AdamOptions options_;
  std::vector<int64_t> steps_;
};

}  // namespace attn::nn
