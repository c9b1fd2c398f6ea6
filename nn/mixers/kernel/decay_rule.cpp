// The decaying fast weights of Mao (2022) (docs/models.md §5.6), per head:
//
//   a_t = σ(W_a x_t + b_a) ∈ (0,1)^{d_v}      b_t = σ(W_b x_t + b_b) ∈ (0,1)^m
//   S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k_tᵀ,     y_t = S_t q_t
//
// no (1 − G) on the write, no normaliser. `gate_v_proj` = Linear(D → H·d_v) and `gate_k_proj` =
// Linear(D → H·m), Xavier weights, biases by the uniform gate initialisation (Gu et al. 2020).
// Causal only.
#include "nn/mixers/kernel/update_rule.hpp"

namespace attn::nn {
namespace {

class DecayRule final : public ScanRule {
 public:
  explicit DecayRule(const UpdateRuleOptions& o) : ScanRule(o) {
    gate_k_proj = register_module("gate_k_proj", gate(o.feature_dim));
    gate_v_proj = register_module("gate_v_proj", gate(o.value_dim));
  }

  Write write(const Tensor& x, const Tensor& phi_k) const override {
    return {heads(sigmoid(gate_v_proj->forward(x)), options_.value_dim),
            heads(sigmoid(gate_k_proj->forward(x)), options_.feature_dim), phi_k};
  }

  std::vector<std::shared_ptr<Linear>> gates() const override { return {gate_k_proj, gate_v_proj}; }

  std::shared_ptr<Linear> gate_k_proj, gate_v_proj;

 private:
  std::shared_ptr<Linear> gate(int64_t width) const {
    auto layer = std::make_shared<Linear>(options_.embed_dim, options_.num_heads * width);
    layer->bias.data_only().copy_(uniform_gate_bias(width, options_.num_heads * width));
    return layer;
  }
  // [B, T, H·w] -> [B, H, T, w]
  Tensor heads(const Tensor& t, int64_t width) const {
    return permute(view(t, {t.size(0), t.size(1), options_.num_heads, width}), {0, 2, 1, 3});
  }
};

}  // namespace

std::shared_ptr<UpdateRule> make_decay_rule(const UpdateRuleOptions& o) { return std::make_shared<DecayRule>(o); }

}  // namespace attn::nn
