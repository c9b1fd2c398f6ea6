// The forms every update rule shares, and the rule factory. See update_rule.hpp.
#include "nn/mixers/kernel/update_rule.hpp"

#include <cmath>
#include <functional>
#include <map>

#include <fmt/ranges.h>

#include "autograd/fused/gated_linear_attention.hpp"

namespace attn::nn {
namespace {

struct RuleEntry {
  std::function<std::shared_ptr<UpdateRule>(const UpdateRuleOptions&)> make;
  bool normalised, causal_only, kernel_features;
};

const std::map<std::string, RuleEntry>& factories() {
  static const std::map<std::string, RuleEntry> table = {
      {"additive", {make_additive_rule, true, false, true}},
      {"decay", {make_decay_rule, false, true, false}},
      {"delta", {make_delta_rule, false, true, true}},
      {"gated", {make_gated_rule, true, true, true}},
  };
  return table;
}

const RuleEntry& entry(const std::string& name) {
  auto it = factories().find(name);
  ATTN_CHECK(it != factories().end(), "unknown update rule '{}' (known: {})", name,
             fmt::join(update_rule_names(), ", "));
  return it->second;
}

}  // namespace

Tensor UpdateRule::as_rows(const Tensor& t) {
  return reshape(contiguous(t), {t.size(0) * t.size(1), t.size(2), t.size(3)});
}

Tensor UpdateRule::with_normaliser_column(const Tensor& v) const {
  return cat({v, ones({v.size(0), v.size(1), v.size(2), 1}, v.dtype(), v.device())}, -1);
}

Tensor UpdateRule::normalise(const Tensor& y, const DenominatorGuard& guard) const {
  const int64_t width = y.size(-1) - 1;
  return narrow(y, -1, 0, width) / guard.apply(narrow(y, -1, width, 1));
}

Tensor ScanRule::value_gate(const Write& w, const Tensor& key_decay, const Shape& values) const {
  Tensor gate = w.value_gate;
  if (key_decay.defined()) gate = gate.defined() ? gate * key_decay : key_decay;
  return gate.defined() ? as_rows(expand(gate, values)) : Tensor();
}

Tensor ScanRule::causal(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v,
                          const DenominatorGuard& guard, const Tensor& key_decay) const {
  const Write w = write(x, phi_k);
  const Tensor values = normalised() ? with_normaliser_column(v) : v;
  const Shape value_shape = values.shape();
  const Tensor a = value_gate(w, key_decay, value_shape);
  const Tensor b = w.key_gate.defined() ? as_rows(w.key_gate) : Tensor();
  const Tensor y = reshape(gated_linear_attention(as_rows(phi_q), as_rows(w.key), as_rows(values), a, b), value_shape);
  return normalised() ? normalise(y, guard) : y;
}

Tensor UpdateRule::summarize(const Tensor& phi_k, const Tensor& v) const {
  ATTN_CHECK(!causal_only(),
             "the {} rule has no non-causal form (its state depends on the order of the keys): use it for decoder "
             "self-attention",
             options_.name);
  const Tensor values = normalised() ? with_normaliser_column(v) : v;
  return matmul(transpose(values, 2, 3), phi_k);  // S = Σ_j v_j φ(k_j)ᵀ  [B, H, N, m]
}

Tensor UpdateRule::read(const Tensor& phi_q, const Tensor& state, const DenominatorGuard& guard) const {
  const Tensor y = matmul(phi_q, transpose(state, 2, 3));  // S φ(q)  [B, H, Tq, N]
  return normalised() ? normalise(y, guard) : y;
}

Tensor UpdateRule::non_causal(const Tensor& phi_q, const Tensor& phi_k, const Tensor& v,
                              const DenominatorGuard& guard) const {
  return read(phi_q, summarize(phi_k, v), guard);
}

Tensor UpdateRule::empty_state(int64_t batch, const Tensor& like) const {
  const int64_t rows = options_.value_dim + (normalised() ? 1 : 0);
  return zeros({batch, options_.num_heads, rows, options_.feature_dim}, like.dtype(), like.device());
}

Tensor ScanRule::step(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k, const Tensor& v, Tensor& state,
                        const DenominatorGuard& guard, const Tensor& key_decay) const {
  const Write w = write(x, phi_k);
  const Tensor values = normalised() ? with_normaliser_column(v) : v;
  const Tensor gate = value_gate(w, key_decay, values.shape());
  const Tensor a = gate.defined() ? detach(gate) : Tensor();
  const Tensor b = w.key_gate.defined() ? detach(as_rows(w.key_gate)) : Tensor();
  const Shape state_shape = state.shape();
  const ops::GatedLinearAttentionResult r =
      ops::gated_linear_attention(detach(as_rows(phi_q)), detach(as_rows(w.key)), detach(as_rows(values)), a, b,
                                  state.reshape({state_shape[0] * state_shape[1], state_shape[2], state_shape[3]}));
  state = r.state.reshape(state_shape);
  const Tensor y = r.y.reshape(values.shape());
  return normalised() ? normalise(y, guard) : y;
}

const std::vector<std::string>& update_rule_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, factory] : factories()) out.push_back(name);
    return out;
  }();
  return names;
}

std::shared_ptr<UpdateRule> make_update_rule(const UpdateRuleOptions& o) { return entry(o.name).make(o); }
bool update_rule_is_normalised(const std::string& name) { return entry(name).normalised; }
bool update_rule_is_causal_only(const std::string& name) { return entry(name).causal_only; }
bool update_rule_needs_kernel_features(const std::string& name) { return entry(name).kernel_features; }

Tensor uniform_gate_bias(int64_t entries, int64_t size) {
  const double n = double(std::max<int64_t>(entries, 3));
  const Tensor u = uniform({size}, 1.0 / n, 1.0 - 1.0 / n);
  return log(u / (1.0 - u));  // logit(u) = −log(1/u − 1)
}

}  // namespace attn::nn
