#include "nn/mixers/softmax_attention.hpp"

#include <algorithm>

#include "nn/layers/stacked_linear.hpp"

namespace attn::nn {
namespace {

// Keys and values seen so far, [B, H, capacity, d] each, of which the first `length`
// positions are filled. Self-attention appends one position per step (capacity doubles);
// cross-attention fills it once from the encoder output.
struct KeyValueCache : MixerState {
  Tensor keys, values;
  int64_t length = 0;
  StackedLinear projections;  // self-attention: q_proj, k_proj, v_proj as one product per step

  int64_t size_bytes() const override { return tensor_bytes({keys, values}); }

  Tensor filled(const Tensor& t) const { return t.narrow(2, 0, length); }

  void append(const Tensor& k, const Tensor& v) {  // k, v [B, H, n, d]
    const int64_t n = k.size(2);
    if (!keys.defined() || length + n > keys.size(2)) grow(std::max<int64_t>(2 * (length + n), 16), k);
    keys.narrow(2, length, n).copy_(k);
    values.narrow(2, length, n).copy_(v);
    length += n;
  }

  void grow(int64_t capacity, const Tensor& like) {
    Shape shape{like.size(0), like.size(1), capacity, like.size(3)};
    Tensor new_keys(shape, like.dtype(), like.device()), new_values(shape, like.dtype(), like.device());
    if (length > 0) {
      new_keys.narrow(2, 0, length).copy_(filled(keys));
      new_values.narrow(2, 0, length).copy_(filled(values));
    }
    keys = new_keys;
    values = new_values;
  }
};

KeyValueCache& as_cache(MixerState& state) {
  auto* cache = dynamic_cast<KeyValueCache*>(&state);
  ATTN_CHECK(cache != nullptr, "softmax attention: decoding state belongs to another mixer kind");
  return *cache;
}

}  // namespace

SoftmaxAttention::SoftmaxAttention(const MixerOptions& o) : MultiHeadMixer(o, "softmax attention") {}

Tensor SoftmaxAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask,
                                bool causal, Tensor* weights) {
  AttentionOptions options = attention_options(weights);
  options.key_padding_mask = key_padding_mask;
  options.causal = causal;
  AttentionResult r = scaled_dot_product_attention(q, k, v, options);
  if (weights) *weights = r.probabilities;
  return merge_heads_and_project(r.out);
}

Tensor SoftmaxAttention::forward(const Tensor& x, const MixerContext& ctx) {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == embed_dim_, "softmax attention: input must be [B, T, {}], got {}",
             embed_dim_, x.shape().str());
  const Tensor& source = cross_attention_ ? ctx.memory : x;
  ATTN_CHECK(source.defined(), "softmax cross-attention needs the encoder output (MixerContext::memory)");
  Tensor q = split_heads(q_proj->forward(x));
  Tensor k = split_heads(k_proj->forward(source));
  Tensor v = split_heads(v_proj->forward(source));
  return attend(q, k, v, ctx.key_padding_mask, ctx.causal, ctx.attention_weights);
}

std::unique_ptr<MixerState> SoftmaxAttention::init_state(int64_t batch, const MixerContext& ctx) {
  auto cache = std::make_unique<KeyValueCache>();
  if (cross_attention_) {
    ATTN_CHECK(ctx.memory.defined() && ctx.memory.size(0) == batch,
               "softmax cross-attention: init_state needs the encoder output for {} sentences", batch);
    cache->keys = split_heads(k_proj->forward(ctx.memory)).contiguous();
    cache->values = split_heads(v_proj->forward(ctx.memory)).contiguous();
    cache->length = cache->keys.size(2);
  } else {
    cache->projections =
        StackedLinear({q_proj->weight, k_proj->weight, v_proj->weight}, {q_proj->bias, k_proj->bias, v_proj->bias});
  }
  return cache;
}

Tensor SoftmaxAttention::step(const Tensor& x, MixerState& state, const MixerContext& ctx) {
  ATTN_CHECK(x.dim() == 3 && x.size(1) == 1 && x.size(2) == embed_dim_,
             "softmax attention: a decoding step takes [B, 1, {}], got {}", embed_dim_, x.shape().str());
  KeyValueCache& cache = as_cache(state);
  Tensor q;
  if (cross_attention_) {
    q = split_heads(q_proj->forward(x));
  } else {
    const std::vector<Tensor> qkv = cache.projections.forward(x);
    cache.append(split_heads(qkv[1]), split_heads(qkv[2]));
    q = split_heads(qkv[0]);
  }
  ATTN_CHECK(cache.length > 0 && cache.keys.size(0) == x.size(0),
             "softmax attention: decoding state holds {} sentences, the step {}",
             cache.keys.defined() ? cache.keys.size(0) : 0, x.size(0));
  return attend(q, cache.filled(cache.keys), cache.filled(cache.values), ctx.key_padding_mask, false,
                ctx.attention_weights);
}

void SoftmaxAttention::reorder(MixerState& state, const Tensor& order) {
  KeyValueCache& cache = as_cache(state);
  if (!cache.keys.defined()) return;
  cache.keys = ops::index_select(cache.keys, 0, order);
  cache.values = ops::index_select(cache.values, 0, order);
}

}  // namespace attn::nn
