// Kernelized and decaying attention. See kernel_attention.hpp.
#include "nn/mixers/kernel_attention.hpp"

#include <algorithm>

#include <fmt/ranges.h>

#include "nn/layers/stacked_linear.hpp"

namespace attn::nn {
namespace {

// The recurrent decoding state: S (with z as its last row for normalised rules) per sentence
// and head, and the step's projections, made once per decode: the query's (cross-attention),
// or the query's, key's and value's as one product (self-attention), with the feature map
// folded into them when it can fold (T2R).
struct RecurrentState : MixerState {
  Tensor sums;       // [B, H, N, m]
  Tensor key_shift;  // the feature map's running stabiliser [B, H, 1, 1] (Performer), else undefined
  StackedLinear projections;
  bool folded = false;  // projections give the features ReLU(W̃x + b̃) of queries and keys
  int64_t size_bytes() const override { return tensor_bytes({sums, key_shift}); }
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
  // Both parts are looked up (each lookup refuses an unknown name) before the checks below,
  // which skip a part that cannot matter to them: a causal place takes any rule, so an unknown
  // rule there was first met when the model was built, in an error that named no place.
  const bool normalisable = feature_map_is_normalisable(parts.map);
  const bool needs_kernel_features = update_rule_needs_kernel_features(parts.rule);
  const bool causal_only = update_rule_is_causal_only(parts.rule);
  ATTN_CHECK(normalisable || !needs_kernel_features,
             "kernel attention '{}': the {} feature map gives no kernel features to normalise by; use it with a rule "
             "without a normaliser (decay)",
             kind, parts.map);
  ATTN_CHECK(causal || !causal_only,
             "kernel attention '{}': the {} rule is causal, so it serves decoder self-attention only ({} needs a "
             "non-causal rule: additive)",
             kind, parts.rule, cross_attention ? "cross-attention" : "encoder self-attention");
}

KernelAttention::KernelAttention(const MixerOptions& o) : MultiHeadMixer(o, "kernel attention"), kind_(o.kind) {
  // Cross-attention is never causal; self-attention's causality is known at the first call.
  check_kernel_mixer_kind(o.kind, !o.cross_attention, o.cross_attention);
  const KindParts parts = parse_kind(o.kind);
  feature_map = register_module("", make_feature_map({parts.map, o.num_heads, head_dim_, o.kernel.feature_size,
                                                      o.kernel.dpfp_rolls, o.cross_attention, o.kernel.redraw,
                                                      o.kernel.draw_stream}));
  rule = register_module(
      "", make_update_rule({parts.rule, o.embed_dim, o.num_heads, head_dim_, feature_map->feature_dim()}));
  guard_ = feature_map->guard();
}

Tensor KernelAttention::heads_of(const Tensor& t) const {
  return permute(view(t, {t.size(0), t.size(1), num_heads_, t.size(2) / num_heads_}), {0, 2, 1, 3});
}

Tensor KernelAttention::masked_key_features(const Tensor& phi, const Tensor& key_padding_mask) const {
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
  feature_map->start_forward();
  const Tensor phi_q = feature_map->queries(split_heads(q_proj->forward(x)));
  const Tensor keys = split_heads(k_proj->forward(source)), v = split_heads(v_proj->forward(source));
  Tensor phi_k, key_decay, y;
  if (!ctx.causal) {
    phi_k = masked_key_features(feature_map->keys(keys), ctx.key_padding_mask);
    y = rule->non_causal(phi_q, phi_k, v, guard_);
  } else {
    Tensor shift;
    const FeatureMap::CausalKeys causal = feature_map->causal_keys(keys, shift);
    phi_k = masked_key_features(causal.phi, ctx.key_padding_mask);
    key_decay = causal.decay;
    y = rule->causal(x, phi_q, phi_k, v, guard_, key_decay);
  }
  if (ctx.attention_weights) *ctx.attention_weights = implied_weights(x, phi_q, phi_k, key_decay, ctx.causal);
  return merge_heads_and_project(y);
}

// Every rule is linear in the values: y_t[c] = Σ_j A_tj[c] v_j[c]. So the rule's answer to a
// unit value is the map: probe j sets v_j = 1 in every channel and every other value to 0, and
// y_t[c] = A_tj[c]; the map is its mean over the channels c (only the decay rule's value gate
// makes A depend on c). All probes run as one batch: probe j of sentence b is row j·B + b.
Tensor KernelAttention::implied_weights(const Tensor& x, const Tensor& phi_q, const Tensor& phi_k,
                                        const Tensor& key_decay, bool causal) const {
  NoGradGuard no_grad;
  const int64_t batch = phi_q.size(0), queries = phi_q.size(2), keys = phi_k.size(2);
  std::vector<int64_t> sentence_of_row(size_t(keys * batch));
  for (size_t row = 0; row < sentence_of_row.size(); ++row) sentence_of_row[row] = int64_t(row) % batch;
  const Tensor rows = from_vector(sentence_of_row, {keys * batch}, phi_q.device());
  const auto per_probe = [&](const Tensor& t) { return t.defined() ? index_select(t, 0, rows) : t; };

  Tensor probes = zeros({keys * batch, num_heads_, keys, head_dim_}, phi_q.dtype());
  const auto fill = [&](auto* values) {
    for (int64_t j = 0; j < keys; ++j)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < num_heads_; ++h)
          std::fill_n(values + (((j * batch + b) * num_heads_ + h) * keys + j) * head_dim_, head_dim_, 1);
  };
  if (probes.dtype() == DType::Float64) fill(probes.data<double>());
  else fill(probes.data<float>());
  probes = probes.to(phi_q.device());  // laid out on the host, used where the model is

  const Tensor answers = causal ? rule->causal(per_probe(x), per_probe(phi_q), per_probe(phi_k), probes, guard_,
                                               per_probe(key_decay))
                                : rule->non_causal(per_probe(phi_q), per_probe(phi_k), probes, guard_);
  return contiguous(permute(view(mean(answers, {3}), {keys, batch, num_heads_, queries}), {1, 2, 3, 0}));
}

std::unique_ptr<MixerState> KernelAttention::init_state(int64_t batch, const MixerContext& ctx) {
  auto state = std::make_unique<RecurrentState>();
  const FeatureMap::Folded queries = feature_map->fold(q_proj->weight, q_proj->bias, true);
  state->folded = queries.weight.defined();
  const Tensor query_weight = state->folded ? queries.weight : q_proj->weight;
  const Tensor query_bias = state->folded ? queries.bias : q_proj->bias;
  if (cross_attention_) {
    ATTN_CHECK(ctx.memory.defined() && ctx.memory.size(0) == batch,
               "{} cross-attention: init_state needs the encoder output for {} sentences", kind_, batch);
    const Tensor phi_k =
        masked_key_features(feature_map->keys(split_heads(k_proj->forward(ctx.memory))), ctx.key_padding_mask);
    state->sums = detach(rule->summarize(phi_k, split_heads(v_proj->forward(ctx.memory))));
    state->projections = StackedLinear({query_weight}, {query_bias});
  } else {
    state->sums = rule->empty_state(batch, q_proj->weight);
    const FeatureMap::Folded keys = feature_map->fold(k_proj->weight, k_proj->bias, false);
    state->projections = StackedLinear({query_weight, state->folded ? keys.weight : k_proj->weight, v_proj->weight},
                                       {query_bias, state->folded ? keys.bias : k_proj->bias, v_proj->bias});
  }
  return state;
}

Tensor KernelAttention::step(const Tensor& x, MixerState& state, const MixerContext& ctx) {
  ATTN_CHECK(x.dim() == 3 && x.size(1) == 1 && x.size(2) == embed_dim_,
             "{}: a decoding step takes [B, 1, {}], got {}", kind_, embed_dim_, x.shape().str());
  RecurrentState& s = as_recurrent(state);
  ATTN_CHECK(s.sums.size(0) == x.size(0), "{}: decoding state holds {} sentences, the step {}", kind_, s.sums.size(0),
             x.size(0));
  const std::vector<Tensor> projected = s.projections.forward(x);  // q (cross), or q, k, v (self)
  const Tensor phi_q = s.folded ? heads_of(relu(projected[0])) : feature_map->queries(split_heads(projected[0]));
  if (cross_attention_) return merge_heads_and_project(rule->read(phi_q, s.sums, guard_));
  FeatureMap::CausalKeys keys;
  if (s.folded) keys.phi = heads_of(relu(projected[1]));
  else keys = feature_map->causal_keys(split_heads(projected[1]), s.key_shift);
  if (ctx.key_padding_mask.defined())  // this step's column of the prefix mask
    keys.phi = masked_fill(keys.phi, view(narrow(ctx.key_padding_mask, 1, ctx.key_padding_mask.size(1) - 1, 1),
                                          {x.size(0), 1, 1, 1}),
                           0.0);
  return merge_heads_and_project(rule->step(x, phi_q, keys.phi, split_heads(projected[2]), s.sums, guard_, keys.decay));
}

void KernelAttention::reorder(MixerState& state, const Tensor& order) {
  RecurrentState& s = as_recurrent(state);
  s.sums = ops::index_select(s.sums, 0, order);
  if (s.key_shift.defined()) s.key_shift = ops::index_select(s.key_shift, 0, order);
}

}  // namespace attn::nn
