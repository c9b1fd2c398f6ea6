// Update rules of kernelized and decaying attention (docs/models.md §5.0, §5.2, §5.5, §5.6): how
// the state S ∈ ℝ^{d_v×m} of one head takes in each key/value pair. The delta rule (§5.5,
// its own recurrence: delta_rule.cpp) aside, every rule here is an instance of one gated
// recurrence (autograd/fused/gated_linear_attention.hpp)
//
//   S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k̃_tᵀ,    y_t = S_t φ(q_t)
//
// and a rule only says what its gates a, b and written key k̃ are (each in its own file):
//   additive   a = b = 1, k̃ = φ(k)                           (§5.0)
//   gated      a = g_t, b = 1, k̃ = (1 − g_t) φ(k), g_t = σ(w_gᵀ x_t + b_g) per head  (RFA-Gate, §5.2)
//   decay      a = σ(W_a x_t + b_a), b = σ(W_b x_t + b_b), k̃ = φ(k)   (Mao 2022, §5.6)
//
// Normalised rules (additive, gated) also keep z_t = the same recurrence over φ(k) and divide:
// y_t = S_t φ(q_t) / guard(z_tᵀ φ(q_t)). z rides along as one more row of S: the values get a
// column of ones, so numerator and denominator come out of one scan.
//
// Forms: non-causal (encoder self, cross; additive only: S and z summed once), causal parallel
// (training: the fused scan) and the recurrent step (decoding: the same scan, one token).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/mixers/kernel/feature_map.hpp"

namespace attn::nn {

// Properties of a rule by name (throws listing the known rules): normalised rules divide by
// z_tᵀφ(q_t); causal-only rules (gated, decay, delta) have a state that depends on the keys'
// order; rules that need kernel features (the normalised ones, and delta with its sum
// normalisation) refuse maps whose features have no sign (identity).
bool update_rule_is_normalised(const std::string& name);
bool update_rule_is_causal_only(const std::string& name);
bool update_rule_needs_kernel_features(const std::string& name);

struct UpdateRuleOptions {
  std::string name;  // additive | gated | decay | delta
  int64_t embed_dim = 0, num_heads = 1, value_dim = 0, feature_dim = 0;  // D, H, d_v, m
};

class UpdateRule : public Module {
 public:
  // The rule's own projections (gate_proj; gate_k_proj, gate_v_proj; beta_proj), empty for additive.
  virtual std::vector<std::shared_ptr<Linear>> gates() const { return {}; }
  bool normalised() const { return update_rule_is_normalised(options_.name); }
  bool causal_only() const { return update_rule_is_causal_only(options_.name); }

  // Causal parallel form over whole sequences: x [B, T, D], φ(q), φ(k) [B, H, T, m], v [B, H, T, d_v]
  // -> [B, H, T, d_v]. `key_decay` [B, H, T, 1] (optional): the feature map's rescaling of the
  // state (Performer's running stabiliser).
  virtual Tensor causal(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v,
                        const DenominatorGuard& guard, const Tensor& key_decay = {}) const = 0;
  // Non-causal form (every query sees every key; padded keys must have φ(k) = 0): S and z
  // summed once. Refused for causal-only rules.
  Tensor non_causal(const Tensor& phi_q, const Tensor& phi_k, const Tensor& v, const DenominatorGuard& guard) const;

  // The state of a decoding step, [B, H, N, m] (S, with z as its last row when normalised).
  virtual Tensor empty_state(int64_t batch, const Tensor& like) const;
  // The non-causal sums of keys and values (cross-attention's state, computed once).
  Tensor summarize(const Tensor& phi_k, const Tensor& v) const;
  // Reads a state without writing: [B, H, Tq, d_v].
  Tensor read(const Tensor& phi_q, const Tensor& state, const DenominatorGuard& guard) const;
  // One token: x [B, 1, D], φ(q), φ(k) [B, H, 1, m], v [B, H, 1, d_v]; advances `state` in place
  // of the handle and returns [B, H, 1, d_v].
  virtual Tensor step(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v, Tensor& state,
                      const DenominatorGuard& guard, const Tensor& key_decay = {}) const = 0;

 protected:
  explicit UpdateRule(const UpdateRuleOptions& options) : options_(options) {}
  static Tensor as_rows(const Tensor& t);  // [B, H, T, w] -> [B·H, T, w]: the rows of a scan
  Tensor with_normaliser_column(const Tensor& v) const;  // [.., d_v] -> [.., d_v + 1] ones last
  Tensor normalise(const Tensor& y, const DenominatorGuard& guard) const;  // [.., N] -> [.., d_v]
  UpdateRuleOptions options_;
};

// The rules that run on the gated scan (additive, gated, decay): a rule only says what one
// step writes, and the forms follow.
class ScanRule : public UpdateRule {
 public:
  // What one step writes: gates a [B, H, T, d_v or 1] and b [B, H, T, m] (undefined: ones)
  // and the written key k̃ [B, H, T, m], from the layer input x [B, T, D] and φ(k).
  struct Write {
    Tensor value_gate, key_gate, key;
  };
  virtual Write write(const Tensor& x, const Tensor& phi_k) const = 0;

  Tensor causal(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v,
                const DenominatorGuard& guard, const Tensor& key_decay = {}) const override;
  Tensor step(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v, Tensor& state,
              const DenominatorGuard& guard, const Tensor& key_decay = {}) const override;

 protected:
  using UpdateRule::UpdateRule;

 private:
  // The value gate of the scan: the rule's, times the map's key decay; [B·H, T, N] rows.
  Tensor value_gate(const Write& w, const Tensor& key_decay, const Shape& values) const;
};

std::shared_ptr<UpdateRule> make_update_rule(const UpdateRuleOptions& options);
const std::vector<std::string>& update_rule_names();

// The rules, one per file (kernel/<name>_rule.cpp).
std::shared_ptr<UpdateRule> make_additive_rule(const UpdateRuleOptions& options);
std::shared_ptr<UpdateRule> make_gated_rule(const UpdateRuleOptions& options);
std::shared_ptr<UpdateRule> make_decay_rule(const UpdateRuleOptions& options);
std::shared_ptr<UpdateRule> make_delta_rule(const UpdateRuleOptions& options);

// Uniform gate initialisation (Gu et al. 2020; docs/models.md §5.6): biases b = logit(u) with
// u ~ U[1/n, 1 − 1/n] for a gate of n entries, so the initial gates spread over (1/n, 1 − 1/n).
Tensor uniform_gate_bias(int64_t entries, int64_t size);

}  // namespace attn::nn
