// NAG with fairseq's semantics (docs/models.md §1.7). See nag.hpp.
#include "nn/nag.hpp"

#include "core/ops_update.hpp"

namespace attn::nn {
NAG::NAG(NamedTensors params, const NAGOptions& options)
    : Optimizer(std::move(params), {"momentum_buffer"}), options_(options) {
  ATTN_CHECK(options.momentum >= 0 && options.momentum < 1, "nag: momentum must lie in [0, 1), got {}",
             options.momentum);
  ATTN_CHECK(options.weight_decay >= 0, "nag: weight decay must be >= 0, got {}", options.weight_decay);
}

void NAG::update(const std::vector<ParamData>& params, float grad_scale) {
  const double mu = options_.momentum;
  const double lr = this->lr();
  const double lr_old = lr_old_.value_or(lr);
  const double lr_correction = lr_old > 0 ? lr / lr_old : lr;
  const NagUpdate update{.shrink = float(1.0 - lr * options_.weight_decay),
                         .buffer_to_param = float(mu * mu * lr_correction),
                         .grad_to_param = float(-(1.0 + mu) * lr),
                         .buffer_decay = float(mu * lr_correction),
                         .grad_to_buffer = float(-lr),
                         .decays = options_.weight_decay != 0.0,
                         .grad_scale = grad_scale};
  std::vector<NagTensors> group;
  group.reserve(params.size());
  for (const ParamData& p : params) group.push_back({p.param, p.grad, p.slots[0], update});
  ops::nag_update_(group);
  lr_old_ = lr;
}

NamedTensors NAG::extra_state() const {
  if (!lr_old_) return {};
  return {{kLrOldKey, from_vector<double>({*lr_old_}, Shape{})}};
}

void NAG::load_extra_state(const std::map<std::string, Tensor>& state) {
  if (state.count(kLrOldKey))
    lr_old_ = *find_state(state, kLrOldKey, DType::Float64, Shape{}).data<double>();
  else
    lr_old_.reset();
}

}  // namespace attn::nn
