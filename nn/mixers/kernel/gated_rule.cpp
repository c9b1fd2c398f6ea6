// The gated rule of RFA-Gate (Peng et al. 2021, Eq. 7; docs/models.md §5.2): a learned scalar
// forget gate per head and step,
//
//   g_t = σ(w_gᵀ x_t + b_g)
//   S_t = g_t S_{t−1} + (1 − g_t) v_t φ(k_t)ᵀ,   z_t = g_t z_{t−1} + (1 − g_t) φ(k_t)
//
// x_t is the layer input. `gate_proj` = Linear(D → H), Xavier weight, biases by the uniform
// gate initialisation (as the decay rule's). Causal only.
#include "nn/mixers/kernel/update_rule.hpp"

namespace attn::nn {
namespace {

class GatedRule final : public ScanRule {
 public:
  explicit GatedRule(const UpdateRuleOptions& o) : ScanRule(o) {
    gate_proj = register_module("gate_proj", std::make_shared<Linear>(o.embed_dim, o.num_heads));
    gate_proj->bias.data_only().copy_(uniform_gate_bias(o.value_dim, o.num_heads));
  }

  // g [B, T, H] -> [B, H, T, 1]; the written key (1 − g) φ(k).
  Write write(const Tensor& x, const Tensor& phi_k) const override {
    const Tensor g = unsqueeze(permute(sigmoid(gate_proj->forward(x)), {0, 2, 1}), 3);
    return {g, {}, phi_k * (1.0 - g)};
  }

  std::vector<std::shared_ptr<Linear>> gates() const override { return {gate_proj}; }

  std::shared_ptr<Linear> gate_proj;
};

}  // namespace

std::shared_ptr<UpdateRule> make_gated_rule(const UpdateRuleOptions& o) { return std::make_shared<GatedRule>(o); }

}  // namespace attn::nn
