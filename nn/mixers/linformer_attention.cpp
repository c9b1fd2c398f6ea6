// Linformer attention. See linformer_attention.hpp.
#include "nn/mixers/linformer_attention.hpp"

namespace attn::nn {
namespace {

// K̄, V̄ (and E_b, for the implied map) of the encoder output, computed once for decoding.
struct CompressedMemory : MixerState {
  Tensor keys, values;  // [B, H, k, d]
  Tensor key_columns;   // E_b [B, k, M]
  int64_t size_bytes() const override { return tensor_bytes({keys, values, key_columns}); }
};

CompressedMemory& as_memory(MixerState& state) {
  auto* memory = dynamic_cast<CompressedMemory*>(&state);
  ATTN_CHECK(memory != nullptr, "linformer attention: decoding state belongs to another mixer kind");
  return *memory;
}

// E or F: a bias-free Linear(n_max → k), as fairseq names it.
std::shared_ptr<Linear> compression(const LinformerOptions& o) {
  auto layer = std::make_shared<Linear>(o.max_seq_len, o.k, false,
                                        o.xavier_init ? LinearInit::Xavier : LinearInit::TorchDefault);
  if (o.freeze) set_requires_grad(layer->weight, false);
  return layer;
}

// The stack's layerwise E, checked against this layer's k and n_max.
std::shared_ptr<Linear> layer_compression(const MixerOptions& o) {
  auto shared = std::dynamic_pointer_cast<Linear>(o.shared);
  ATTN_CHECK(shared != nullptr,
             "linformer attention: shared_layer (--shared-layer-kv-compressed) needs the stack's compress_layer "
             "(a Linear) in MixerOptions::shared, which is {}",
             o.shared ? "another kind of module" : "null");
  ATTN_CHECK(shared->weight.shape() == Shape({o.linformer.k, o.linformer.max_seq_len}),
             "linformer attention: the stack's compress_layer is {}, this layer needs [k = {}, max_seq_len = {}]",
             shared->weight.shape().str(), o.linformer.k, o.linformer.max_seq_len);
  return shared;
}

// Each key's position within its sentence, counting real tokens only (pads: 0, masked
// later), int64 [B, M]. Left padding gives t − (M − L_b); no padding side is assumed.
Tensor positions_in_sentence(const Tensor& key_padding_mask, int64_t batch, int64_t length, Device device) {
  if (!key_padding_mask.defined())
    return arange(0, double(length), 1.0, DType::Int64, device).unsqueeze(0).expand({batch, length});
  const Tensor real = ops::eq(key_padding_mask, 0.0).to(DType::Int64);
  return ops::mul(ops::sub(ops::cumsum(real, 1), 1.0), real);
}

// E_b [B, k, M]: E's column positions[b, t] for each key, zero at pads — one gather of
// E's columns, then the mask.
Tensor sentence_columns(const Tensor& e, const Tensor& positions, const Tensor& key_padding_mask) {
  const int64_t batch = positions.size(0), length = positions.size(1);
  const Tensor gathered = index_select(e, 1, positions.reshape({batch * length}));  // [k, B·M]
  const Tensor columns = permute(reshape(gathered, {e.size(0), batch, length}), {1, 0, 2});
  if (!key_padding_mask.defined()) return columns;
  return masked_fill(columns, unsqueeze(key_padding_mask, 1), 0.0);
}

}  // namespace

LinformerAttention::LinformerAttention(const MixerOptions& o)
    : MultiHeadMixer(o, "linformer attention"), max_seq_len_(o.linformer.max_seq_len), k_(o.linformer.k) {
  ATTN_CHECK(k_ >= 1 && k_ <= max_seq_len_,
             "linformer attention: k = {} must be in [1, max_seq_len = {}] (--linformer-k, or --compressed)", k_,
             max_seq_len_);
  if (o.linformer.shared_layer) {
    compress_k = layer_compression(o);  // the stack's, saved once there: not a child of this module
    return;
  }
  compress_k = register_module("compress_k", compression(o.linformer));
  if (!o.linformer.shared_kv) compress_v = register_module("compress_v", compression(o.linformer));
}

LinformerAttention::Compressed LinformerAttention::compress(const Tensor& memory, const Tensor& key_padding_mask) const {
  const int64_t batch = memory.size(0), length = memory.size(1);
  ATTN_CHECK(length <= max_seq_len_,
             "linformer attention: {} key positions are longer than --max-source-positions {} (max_seq_len, the "
             "columns of E); longer sentences cannot be compressed",
             length, max_seq_len_);
  ATTN_CHECK(!key_padding_mask.defined() || key_padding_mask.shape() == Shape({batch, length}),
             "linformer attention: key_padding_mask must be [{}, {}], got {}", batch, length,
             key_padding_mask.shape().str());
  const Tensor positions = positions_in_sentence(key_padding_mask, batch, length, memory.device());
  // Zero columns at pads zero the pad rows of K and V after the biased projection.
  const Tensor e = sentence_columns(compress_k->weight, positions, key_padding_mask);
  const Tensor f = compress_v ? sentence_columns(compress_v->weight, positions, key_padding_mask) : e;
  const Tensor keys = matmul(e, k_proj->forward(memory));  // K̄ = E_b K  [B, k, D]
  const Tensor values = matmul(f, v_proj->forward(memory));  // V̄ = F_b V
  return {split_heads(keys), split_heads(values), e};
}

Tensor LinformerAttention::attend(const Tensor& x, const Compressed& c, Tensor* weights) const {
  const AttentionResult r =
      scaled_dot_product_attention(split_heads(q_proj->forward(x)), c.keys, c.values, attention_options(weights));
  if (weights) *weights = implied_weights(r.probabilities, c.key_columns);
  return merge_heads_and_project(r.out);
}

// The weights over the k compressed keys mapped back to key positions: P̄ E_b [B, H, N, M].
Tensor LinformerAttention::implied_weights(const Tensor& probabilities, const Tensor& key_columns) const {
  NoGradGuard no_grad;
  return ops::matmul(detach(probabilities), detach(key_columns).unsqueeze(1));
}

Tensor LinformerAttention::forward(const Tensor& x, const MixerContext& ctx) {
  ATTN_CHECK(!ctx.causal,
             "linformer cannot be used for decoder self-attention: it cannot be causal (its compression mixes "
             "every position); use it for encoder self-attention or cross-attention");
  ATTN_CHECK(x.dim() == 3 && x.size(2) == embed_dim_, "linformer attention: input must be [B, T, {}], got {}",
             embed_dim_, x.shape().str());
  const Tensor& memory = cross_attention_ ? ctx.memory : x;
  ATTN_CHECK(memory.defined(), "linformer cross-attention needs the encoder output (MixerContext::memory)");
  return attend(x, compress(memory, ctx.key_padding_mask), ctx.attention_weights);
}

std::unique_ptr<MixerState> LinformerAttention::init_state(int64_t batch, const MixerContext& ctx) {
  ATTN_CHECK(cross_attention_, "linformer attention decodes only as cross-attention: it cannot be causal, so "
                               "it cannot be used for decoder self-attention");
  ATTN_CHECK(ctx.memory.defined() && ctx.memory.size(0) == batch,
             "linformer cross-attention: init_state needs the encoder output for {} sentences", batch);
  const Compressed c = compress(ctx.memory, ctx.key_padding_mask);
  auto state = std::make_unique<CompressedMemory>();
  state->keys = c.keys.contiguous();
  state->values = c.values.contiguous();
  state->key_columns = detach(c.key_columns).contiguous();
  return state;
}

Tensor LinformerAttention::step(const Tensor& x, MixerState& state, const MixerContext& ctx) {
  ATTN_CHECK(cross_attention_, "linformer attention: step() is for cross-attention only; self-attention "
                               "Linformer cannot be causal, so it cannot be used for decoder self-attention");
  CompressedMemory& memory = as_memory(state);
  ATTN_CHECK(x.dim() == 3 && x.size(1) == 1 && x.size(2) == embed_dim_ && x.size(0) == memory.keys.size(0),
             "linformer attention: a decoding step takes [{}, 1, {}], got {}", memory.keys.size(0), embed_dim_,
             x.shape().str());
  return attend(x, {memory.keys, memory.values, memory.key_columns}, ctx.attention_weights);
}

void LinformerAttention::reorder(MixerState& state, const Tensor& order) {
  CompressedMemory& memory = as_memory(state);
  memory.keys = ops::index_select(memory.keys, 0, order);
  memory.values = ops::index_select(memory.values, 0, order);
  memory.key_columns = ops::index_select(memory.key_columns, 0, order);
}

std::shared_ptr<Module> make_linformer_layer_compression(const MixerOptions& options) {
  if (!options.linformer.shared_layer) return nullptr;
  return compression(options.linformer);
}

}  // namespace attn::nn
