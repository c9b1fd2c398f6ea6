// Kernelized and decaying attention. See kernel_attention.hpp.
#include "nn/mixers/kernel_attention.hpp"

#include <fmt/ranges.h>

namespace attn::nn {
namespace {

// The recurrent decoding state: S (with z as its last row for normalised rules) per sentence
// and head, and the folded feature projections of maps that fold (T2R), made once per decode.
struct RecurrentState : MixerState {
  Tensor sums;  // [B, H, N, m]
  FeatureMap::Folded queries, keys;
  int64_t size_bytes() const override { return tensor_bytes({sums}); }
};

RecurrentState& as_recurrent(MixerState& state) {
  auto* recurrent = dynamic_cast<RecurrentState*>(&state);
  ATTN_CHECK(recurrent != nullptr, "kernel attention: decoding state belongs to another mixer kind");
  return *recurrent;
}

struct KindParts {
  std::string map, rule;
};

// "kernel:<map>+<rule>"
KindParts parse_kind(const std::string& kind) {
  const std::string prefix = "kernel:";
  const size_t plus = kind.find('+');
  ATTN_CHECK(kind.rfind(prefix, 0) == 0 && plus != std::string::npos && plus > prefix.size() && plus + 1 < kind.size(),
             "kernel attention: mixer '{}' must be kernel:<feature map>+<update rule> (maps: {}; rules: {})", kind,
             fmt::join(feature_map_names(), ", "), fmt::join(update_rule_names(), ", "));
  return {kind.substr(prefix.size(), plus - prefix.size()), kind.substr(plus + 1)};
}

}  // namespace

void check_kernel_mixer_kind(const std::string& kind, bool causal, bool cross_attention) {
  const KindParts parts = parse_kind(kind);
  ATTN_CHECK(feature_map_is_normalisable(parts.map) || !update_rule_is_normalised(parts.rule),
             "kernel attention '{}': the {} feature map gives no kernel features to normalise by; use it with a rule "
             "without a normaliser (decay)",
             kind, parts.map);
  ATTN_CHECK(causal || !update_rule_is_causal_only(parts.rule),
             "kernel attention '{}': the {} rule is causal, so it serves decoder self-attention only ({} needs a "
             "non-causal rule: additive)",
             kind, parts.rule, cross_attention ? "cross-attention" : "encoder self-attention");
}

KernelAttention::KernelAttention(const MixerOptions& o) : MultiHeadMixer(o, "kernel attention"), kind_(o.kind) {
  // Cross-attention is never causal; self-attention's causality is known at the first call.
  check_kernel_mixer_kind(o.kind, !o.cross_attention, o.cross_attention);
  const KindParts parts = parse_kind(o.kind);
  feature_map = register_module("", make_feature_map({parts.map, o.num_heads, head_dim_, o.kernel.feature_size,
                                                      o.kernel.dpfp_rolls, o.cross_attention}));
  rule = register_module(
      "", make_update_rule({parts.rule, o.embed_dim, o.num_heads, head_dim_, feature_map->feature_dim()}));
  guard_ = feature_map->guard();
}

Tensor KernelAttention::heads_of(const Tensor& t) const {
  return permute(view(t, {t.size(0), t.size(1), num_heads_, t.size(2) / num_heads_}), {0, 2, 1, 3});
}

Tensor KernelAttention::masked_key_features(const Tensor& keys, const Tensor& key_padding_mask) const {
  const Tensor phi = feature_map->keys(keys);
  if (!key_padding_mask.defined()) return phi;
  ATTN_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == phi.size(0) &&
                 key_padding_mask.size(1) == phi.size(2),
             "{}: key_padding_mask must be [B = {}, T = {}], got {}", kind_, phi.size(0), phi.size(2),
             key_padding_mask.shape().str());
  return masked_fill(phi, unsqueeze(unsqueeze(key_padding_mask, 1), 3), 0.0);
}

Tensor KernelAttention::forward(const Tensor& x, const MixerContext& ctx) {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == embed_dim_, "{}: input must be [B, T, {}], got {}", kind_, embed_dim_,
             x.shape().str());
  const Tensor& source = cross_attention_ ? ctx.memory : x;
  ATTN_CHECK(source.defined(), "{} cross-attention needs the encoder output (MixerContext::memory)", kind_);
  if (!ctx.causal) check_kernel_mixer_kind(kind_, false, cross_attention_);
  const Tensor phi_q = feature_map->queries(split_heads(q_proj->forward(x)));
  const Tensor phi_k = masked_key_features(split_heads(k_proj->forward(source)), ctx.key_padding_mask);
  const Tensor v = split_heads(v_proj->forward(source));
  const Tensor y = ctx.causal ? rule->causal(x, phi_q, phi_k, v, guard_) : rule->non_causal(phi_q, phi_k, v, guard_);
  return merge_heads_and_project(y);
}

std::unique_ptr<MixerState> KernelAttention::init_state(int64_t batch, const MixerContext& ctx) {
  auto state = std::make_unique<RecurrentState>();
  state->queries = feature_map->fold(q_proj->weight, q_proj->bias, true);
  if (cross_attention_) {
    ATTN_CHECK(ctx.memory.defined() && ctx.memory.size(0) == batch,
               "{} cross-attention: init_state needs the encoder output for {} sentences", kind_, batch);
    const Tensor phi_k = masked_key_features(split_heads(k_proj->forward(ctx.memory)), ctx.key_padding_mask);
    state->sums = detach(rule->summarize(phi_k, split_heads(v_proj->forward(ctx.memory))));
  } else {
    state->sums = rule->empty_state(batch, q_proj->weight);
    state->keys = feature_map->fold(k_proj->weight, k_proj->bias, false);
  }
  return state;
}

Tensor KernelAttention::step(const Tensor& x, MixerState& state, const MixerContext& ctx) {
  ATTN_CHECK(x.dim() == 3 && x.size(1) == 1 && x.size(2) == embed_dim_,
             "{}: a decoding step takes [B, 1, {}], got {}", kind_, embed_dim_, x.shape().str());
  RecurrentState& s = as_recurrent(state);
  ATTN_CHECK(s.sums.size(0) == x.size(0), "{}: decoding state holds {} sentences, the step {}", kind_, s.sums.size(0),
             x.size(0));
  auto features = [&](const FeatureMap::Folded& folded, const std::shared_ptr<Linear>& projection, bool query) {
    if (folded.weight.defined()) return heads_of(relu(linear(x, folded.weight, folded.bias)));
    const Tensor projected = split_heads(projection->forward(x));
    return query ? feature_map->queries(projected) : feature_map->keys(projected);
  };
  const Tensor phi_q = features(s.queries, q_proj, true);
  if (cross_attention_) return merge_heads_and_project(rule->read(phi_q, s.sums, guard_));
  Tensor phi_k = features(s.keys, k_proj, false);
  if (ctx.key_padding_mask.defined())  // this step's column of the prefix mask
    phi_k = masked_fill(phi_k, view(narrow(ctx.key_padding_mask, 1, ctx.key_padding_mask.size(1) - 1, 1),
                                    {x.size(0), 1, 1, 1}),
                        0.0);
  const Tensor v = split_heads(v_proj->forward(x));
  return merge_heads_and_project(rule->step(x, phi_q, phi_k, v, s.sums, guard_));
}

void KernelAttention::reorder(MixerState& state, const Tensor& order) {
  RecurrentState& s = as_recurrent(state);
  s.sums = ops::index_select(s.sums, 0, order);
}

}  // namespace attn::nn
