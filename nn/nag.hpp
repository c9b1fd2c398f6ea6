// Nesterov's accelerated gradient in fairseq's formulation (docs/models.md §1.7;
// Sutskever et al. 2013). The stored parameters are the look-ahead point φ = θ + μ·b, so
// the gradient is taken at the stored values. With momentum μ, buffer b (zero at start)
// and r = lr / lr_old correcting b when the schedule changes lr, each step does:
//
//   θ ← θ · (1 − lr·wd)             (decoupled weight decay, only when wd ≠ 0)
//   θ ← θ + μ²·r·b − (1+μ)·lr·g
//   b ← μ·r·b − lr·g
//   lr_old ← lr
//
// Before the first step lr_old is the current lr (r = 1). As in fairseq, r = lr when
// lr_old is 0 (the buffer is then zero anyway). Arithmetic is float32 per element.
#pragma once
#include <optional>

#include "nn/optimizer.hpp"

namespace attn::nn {

struct NAGOptions {
  double momentum = 0.99;     // --momentum
  double weight_decay = 0.0;  // --weight-decay
};

class NAG : public Optimizer {
 public:
  NAG(NamedTensors params, const NAGOptions& options);
  std::string name() const override { return "nag"; }
  // state_dict()'s entry of lr_old, a float64 scalar (absent before the first step).
  static constexpr const char* kLrOldKey = "lr_old";

 private:
  void update(const std::vector<ParamData>& params, float grad_scale) override;
  NamedTensors extra_state() const override;
  void load_extra_state(const std::map<std::string, Tensor>& state) override;

  NAGOptions options_;
  std::optional<double> lr_old_;  // the lr of the previous step; none before the first
};

}  // namespace attn::nn
