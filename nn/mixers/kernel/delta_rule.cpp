// The delta rule of Schlag, Irie & Schmidhuber (2021, Eq. 21–24 and 29; docs/models.md §5.5):
// fast weights W that are corrected rather than summed. Per head:
//
//   φ'(x) = φ(x) / Σ_i φ(x)_i                     sum normalisation of keys and queries
//   β_t = σ(w_βᵀ x_t + b_β)                       the write strength (`beta_proj`, Linear(D → H))
//   u_t = β_t (v_t − W_{t−1} φ'(k_t)),  W_t = W_{t−1} + u_t φ'(k_t)ᵀ,  y_t = d^{−1/2} W_t φ'(q_t)
//
// no attention normaliser (the Delta Net runs skip it). The sums are clamped at 10⁻⁶ so an
// all-zero φ (DPFP of a zero vector) gives φ' = 0 instead of NaN. A map's running stabiliser
// (Performer) cancels in φ' and is ignored. Causal only; the recurrence is its own fused op
// (autograd/fused/delta_rule.hpp), decoding runs it one token at a time.
#include <cmath>
#include <limits>

#include "autograd/fused/delta_rule.hpp"
#include "nn/mixers/kernel/update_rule.hpp"

namespace attn::nn {
namespace {

class DeltaRule final : public UpdateRule {
 public:
  explicit DeltaRule(const UpdateRuleOptions& o) : UpdateRule(o) {
    beta_proj = register_module("beta_proj", std::make_shared<Linear>(o.embed_dim, o.num_heads));
  }

  Tensor causal(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v, const DenominatorGuard&,
                const Tensor&) const override {
    const Tensor y = delta_rule(as_rows(sum_normalised(phi_q)), as_rows(sum_normalised(phi_k)), as_rows(v),
                                strengths(x));
    return reshape(y, v.shape()) * output_scale();
  }

  Tensor empty_state(int64_t batch, const Tensor& like) const override {
    return zeros({batch, options_.num_heads, options_.value_dim, options_.feature_dim}, like.dtype(), like.device());
  }

  Tensor step(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v, Tensor& state,
              const DenominatorGuard&, const Tensor&) const override {
    const Shape state_shape = state.shape();
    const ops::DeltaRuleResult r = ops::delta_rule(
        detach(as_rows(sum_normalised(phi_q))), detach(as_rows(sum_normalised(phi_k))), detach(as_rows(v)),
        detach(strengths(x)), state.reshape({state_shape[0] * state_shape[1], state_shape[2], state_shape[3]}));
    state = r.state.reshape(state_shape);
    return r.y.reshape(v.shape()) * output_scale();
  }

  std::vector<std::shared_ptr<Linear>> gates() const override { return {beta_proj}; }

  std::shared_ptr<Linear> beta_proj;

 private:
  static Tensor sum_normalised(const Tensor& phi) {
    return phi / clamp(sum(phi, {-1}, true), 1e-6, std::numeric_limits<double>::infinity());
  }
  // β [B, T, H] -> [B·H, T]
  Tensor strengths(const Tensor& x) const {
    const Tensor beta = permute(sigmoid(beta_proj->forward(x)), {0, 2, 1});
    return reshape(contiguous(beta), {x.size(0) * options_.num_heads, x.size(1)});
  }
  double output_scale() const { return 1.0 / std::sqrt(double(options_.value_dim)); }
};

}  // namespace

std::shared_ptr<UpdateRule> make_delta_rule(const UpdateRuleOptions& o) { return std::make_shared<DeltaRule>(o); }

}  // namespace attn::nn
