// Linformer attention. See linformer_attention.hpp.
#include "nn/mixers/linformer_attention.hpp"

#include <cmath>

#include "autograd/fused/scaled_dot_product.hpp"

namespace attn::nn {
namespace {

// K̄ and V̄ of the encoder output, computed once for decoding.
struct CompressedMemory : MixerState {
  Tensor keys, values;
};

CompressedMemory& as_memory(MixerState& state) {
  auto* memory = dynamic_cast<CompressedMemory*>(&state);
  ATTN_CHECK(memory != nullptr, "linformer attention: decoding state belongs to another mixer kind");
  return *memory;
}

std::shared_ptr<Linear> compression(const LinformerOptions& o) {
  auto layer = std::make_shared<Linear>(o.max_seq_len, o.k, false,
                                        o.xavier_init ? LinearInit::Xavier : LinearInit::TorchDefault);
  if (o.freeze) set_requires_grad(layer->weight, false);
  return layer;
}

// Each key's position within its sentence, counting real tokens only (0 for pads): the
// column of E it meets. int64 [B, M].
Tensor sentence_positions(const Tensor& key_padding_mask, int64_t batch, int64_t length) {
  if (!key_padding_mask.defined()) return arange(0, double(length)).unsqueeze(0).expand({batch, length});
  const Tensor real = ops::eq(key_padding_mask, 0.0).to(DType::Int64);
  return ops::mul(ops::sub(ops::cumsum(real, 1), 1.0), real);  // pads: 0
}

}  // namespace

LinformerAttention::LinformerAttention(const MixerOptions& o)
    : embed_dim_(o.embed_dim),
      num_heads_(o.num_heads),
      head_dim_(o.num_heads > 0 ? o.embed_dim / o.num_heads : 0),
      max_seq_len_(o.linformer.max_seq_len),
      k_(o.linformer.k),
      attention_dropout_(o.attention_dropout),
      cross_attention_(o.cross_attention) {
  ATTN_CHECK(o.embed_dim > 0 && o.num_heads > 0 && o.embed_dim % o.num_heads == 0,
             "linformer attention: embed_dim {} must be a positive multiple of num_heads {}", o.embed_dim, o.num_heads);
  ATTN_CHECK(k_ >= 1 && k_ <= max_seq_len_,
             "linformer attention: k = {} must be in [1, max_seq_len = {}] (--linformer-k / --compressed)", k_,
             max_seq_len_);
  const double qkv_gain = 1.0 / std::sqrt(2.0);
  q_proj = register_module("q_proj", std::make_shared<Linear>(embed_dim_, embed_dim_, true, LinearInit::Xavier, qkv_gain));
  k_proj = register_module("k_proj", std::make_shared<Linear>(embed_dim_, embed_dim_, true, LinearInit::Xavier, qkv_gain));
  v_proj = register_module("v_proj", std::make_shared<Linear>(embed_dim_, embed_dim_, true, LinearInit::Xavier, qkv_gain));
  out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim_, embed_dim_, true, LinearInit::Xavier));
  if (o.linformer.shared_layer) {
    compress_k = std::dynamic_pointer_cast<Linear>(o.shared);  // the stack's, saved once there
    ATTN_CHECK(compress_k != nullptr,
               "linformer attention: --shared-layer-kv-compressed needs the stack's shared compress_layer");
  } else {
    compress_k = register_module("compress_k", compression(o.linformer));
    if (!o.linformer.shared_kv) compress_v = register_module("compress_v", compression(o.linformer));
  }
}

Tensor LinformerAttention::split_heads(const Tensor& x) const {
  return permute(view(x, {x.size(0), x.size(1), num_heads_, head_dim_}), {0, 2, 1, 3});
}

LinformerAttention::Compressed LinformerAttention::compress(const Tensor& memory, const Tensor& key_padding_mask) const {
  const int64_t batch = memory.size(0), length = memory.size(1);
  ATTN_CHECK(length <= max_seq_len_,
             "linformer attention: {} keys but E has max_seq_len = {} columns (--max-source-positions); "
             "longer sentences cannot be compressed",
             length, max_seq_len_);
  Tensor keys = k_proj->forward(memory), values = v_proj->forward(memory);
  if (key_padding_mask.defined()) {  // zeroed after the biased projection: pads add nothing to K̄, V̄
    const Tensor pads = unsqueeze(key_padding_mask, -1);
    keys = masked_fill(keys, pads, 0.0);
    values = masked_fill(values, pads, 0.0);
  }
  const Tensor positions = sentence_positions(key_padding_mask, batch, length);
  const Tensor flat = positions.reshape({batch * length});
  // E_m [B, k, M]: E's columns at each key's position within its sentence.
  auto columns = [&](const Linear& e) {
    return permute(reshape(index_select(e.weight, 1, flat), {k_, batch, length}), {1, 0, 2});
  };
  const Tensor e = columns(*compress_k);
  const Tensor f = compress_v ? columns(*compress_v) : e;
  return {split_heads(matmul(e, keys)), split_heads(matmul(f, values)), positions};
}

Tensor LinformerAttention::attend(const Tensor& x, const Compressed& c, const Tensor& key_padding_mask,
                                  Tensor* weights) const {
  AttentionOptions options;
  options.scale = 1.0 / std::sqrt(double(head_dim_));
  options.dropout = attention_dropout_;
  options.training = is_training();
  options.return_probabilities = weights != nullptr;
  const AttentionResult r = scaled_dot_product_attention(split_heads(q_proj->forward(x)), c.keys, c.values, options);
  if (weights) {  // the implied map over key positions: P̄ · E_m, zero at pads
    NoGradGuard no_grad;
    const int64_t batch = x.size(0), length = c.positions.size(1);
    const Tensor e = ops::index_select(detach(compress_k->weight), 1, c.positions.reshape({-1}))
                         .reshape({k_, batch, length})
                         .permute({1, 0, 2});
    Tensor implied = ops::matmul(r.probabilities, e.unsqueeze(1));
    if (key_padding_mask.defined())
      implied = ops::masked_fill(implied, key_padding_mask.unsqueeze(1).unsqueeze(1), 0.0);
    *weights = implied;
  }
  const Tensor merged = reshape(permute(r.out, {0, 2, 1, 3}), {x.size(0), x.size(1), embed_dim_});
  return out_proj->forward(merged);
}

Tensor LinformerAttention::forward(const Tensor& x, const MixerContext& ctx) {
  ATTN_CHECK(!ctx.causal, "linformer attention cannot be causal (its compression mixes every position): "
                          "use it for encoder self-attention or cross-attention, not decoder self-attention");
  ATTN_CHECK(x.dim() == 3 && x.size(2) == embed_dim_, "linformer attention: input must be [B, T, {}], got {}",
             embed_dim_, x.shape().str());
  const Tensor& memory = cross_attention_ ? ctx.memory : x;
  ATTN_CHECK(memory.defined(), "linformer cross-attention needs the encoder output (MixerContext::memory)");
  return attend(x, compress(memory, ctx.key_padding_mask), ctx.key_padding_mask, ctx.attention_weights);
}

std::unique_ptr<MixerState> LinformerAttention::init_state(int64_t batch, const MixerContext& ctx) {
  ATTN_CHECK(cross_attention_, "linformer attention decodes only as cross-attention (it cannot be causal)");
  ATTN_CHECK(ctx.memory.defined() && ctx.memory.size(0) == batch,
             "linformer cross-attention: init_state needs the encoder output for {} sentences", batch);
  const Compressed c = compress(ctx.memory, ctx.key_padding_mask);
  auto state = std::make_unique<CompressedMemory>();
  state->keys = c.keys.contiguous();
  state->values = c.values.contiguous();
  return state;
}

Tensor LinformerAttention::step(const Tensor& x, MixerState& state, const MixerContext& ctx) {
  CompressedMemory& memory = as_memory(state);
  ATTN_CHECK(x.dim() == 3 && x.size(1) == 1 && x.size(0) == memory.keys.size(0),
             "linformer attention: a decoding step takes [{}, 1, {}], got {}", memory.keys.size(0), embed_dim_,
             x.shape().str());
  return attend(x, {memory.keys, memory.values, Tensor()}, Tensor(), nullptr);
}

void LinformerAttention::reorder(MixerState& state, const Tensor& order) {
  CompressedMemory& memory = as_memory(state);
  memory.keys = ops::index_select(memory.keys, 0, order);
  memory.values = ops::index_select(memory.values, 0, order);
}

std::shared_ptr<Module> make_linformer_layer_compression(const MixerOptions& options) {
  if (!options.linformer.shared_layer) return nullptr;
  return compression(options.linformer);
}

}  // namespace attn::nn
