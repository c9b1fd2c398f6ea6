// The additive rule of linear attention (Katharopoulos et al. 2020, Eq. 8–9; docs/models.md §5.0):
//
//   S_t = S_{t−1} + v_t φ(k_t)ᵀ,   z_t = z_{t−1} + φ(k_t),   y_t = S_t φ(q_t) / guard(z_tᵀ φ(q_t))
//
// no gates, no parameters; the only rule with a non-causal form (S, z summed over all keys).
#include "nn/mixers/kernel/update_rule.hpp"

namespace attn::nn {
namespace {

class AdditiveRule final : public ScanRule {
 public:
  explicit AdditiveRule(const UpdateRuleOptions& o) : ScanRule(o) {}
  Write write(const Tensor&, const Tensor& phi_k) const override { return {{}, {}, phi_k}; }
};

}  // namespace

std::shared_ptr<UpdateRule> make_additive_rule(const UpdateRuleOptions& o) { return std::make_shared<AdditiveRule>(o); }

}  // namespace attn::nn
