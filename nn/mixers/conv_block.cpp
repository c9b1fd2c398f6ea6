// The LightConv / DynamicConv block. See conv_block.hpp.
#include "nn/mixers/conv_block.hpp"

#include <limits>

#include "autograd/fused/banded_conv.hpp"
#include "nn/layers/init.hpp"

namespace attn::nn {
namespace {

// The last K−1 conv inputs of each sequence, [B, n, C] with n ≤ K−1 (undefined before the
// first step).
struct ConvWindow : MixerState {
  Tensor inputs;
  int64_t size_bytes() const override { return tensor_bytes({inputs}); }
};

ConvWindow& as_window(MixerState& state) {
  auto* window = dynamic_cast<ConvWindow*>(&state);
  ATTN_CHECK(window != nullptr, "conv block: decoding state belongs to another mixer kind");
  return *window;
}

}  // namespace

ConvTaps::ConvTaps(bool dynamic, int64_t conv_dim, int64_t heads, int64_t kernel_size) {
  if (dynamic) {
    weight_linear = register_module("weight_linear", std::make_shared<Linear>(conv_dim, heads * kernel_size, false));
  } else {
    weight = register_parameter("weight", init::xavier_uniform({heads, 1, kernel_size}));
  }
}

ConvBlock::ConvBlock(const MixerOptions& o)
    : dynamic_(o.kind == "dynamicconv"),
      conv_dim_(o.conv.conv_dim > 0 ? o.conv.conv_dim : o.embed_dim),
      num_heads_(o.num_heads),
      kernel_size_(o.conv.kernel_size),
      glu_(o.conv.glu),
      weight_softmax_(o.conv.weight_softmax),
      fairseq_softmax_span_(o.conv.fairseq_softmax_span),
      weight_dropout_(o.conv.weight_dropout),
      input_dropout_(o.conv.input_dropout) {
  ATTN_CHECK(!o.cross_attention, "{}: a convolution cannot attend to the encoder (cross_mixer)", kind());
  ATTN_CHECK(kernel_size_ > 0, "{}: kernel size must be positive, got {}", kind(), kernel_size_);
  ATTN_CHECK(num_heads_ > 0 && conv_dim_ % num_heads_ == 0, "{}: conv dim {} must be a multiple of the {} heads",
             kind(), conv_dim_, num_heads_);
  linear1 = register_module("linear1", std::make_shared<Linear>(o.embed_dim, glu_ ? 2 * conv_dim_ : conv_dim_));
  conv = register_module("conv", std::make_shared<ConvTaps>(dynamic_, conv_dim_, num_heads_, kernel_size_));
  linear2 = register_module("linear2", std::make_shared<Linear>(conv_dim_, o.embed_dim));
}

Tensor ConvBlock::conv_input(const Tensor& x) const {
  Tensor u = linear1->forward(dropout(x, input_dropout_, is_training()));
  if (!glu_) return u;
  return mul(narrow(u, -1, 0, conv_dim_), sigmoid(narrow(u, -1, conv_dim_, conv_dim_)));  // value ⊙ σ(gate)
}

Tensor ConvBlock::taps(const Tensor& u, int64_t span) const {
  const int64_t heads = num_heads_, k = kernel_size_;
  Tensor logits = dynamic_ ? reshape(conv->weight_linear->forward(u), {u.size(0), u.size(1), heads, k})
                           : reshape(conv->weight, {heads, k});
  if (weight_softmax_) {
    if (span > 0 && span < k) {  // fairseq's span: only the last `span` taps take part
      Tensor cut = ops::lt(arange(0, double(k), 1.0, DType::Int64, u.device()), double(k - span));
      logits = masked_fill(logits, cut, -std::numeric_limits<double>::infinity());
    }
    logits = softmax(logits, -1);
  }
  if (!is_training() || weight_dropout_ == 0.0) return logits;
  if (!dynamic_) logits = expand(reshape(logits, {1, 1, heads, k}), {u.size(0), u.size(1), heads, k});
  return dropout(logits, weight_dropout_, true);  // DropConnect, one mask per (b, t, h, j)
}

Tensor ConvBlock::forward(const Tensor& x, const MixerContext& ctx) {
  Tensor u = conv_input(x);
  if (!ctx.causal && ctx.key_padding_mask.defined()) u = masked_fill(u, unsqueeze(ctx.key_padding_mask, -1), 0.0);
  const int64_t length = x.size(1);
  const bool fairseq_span = fairseq_softmax_span_ && dynamic_ && ctx.causal && kernel_size_ > length;
  const Tensor weights = taps(u, fairseq_span ? length : 0);
  const int64_t padding_left = ctx.causal ? kernel_size_ - 1 : (kernel_size_ - 1) / 2;
  if (ctx.attention_weights) *ctx.attention_weights = implied_weights(weights, u, padding_left, ctx);
  return linear2->forward(banded_conv(u, weights, padding_left));
}

// The taps laid on the band: output t of head h reads input s = t + j − P with tap j, so
// A[b, h, t, s] = W̃[b, t, h, s − t + P] where that tap exists; padded inputs (u = 0) get none.
Tensor ConvBlock::implied_weights(const Tensor& taps, const Tensor& u, int64_t padding_left,
                                  const MixerContext& ctx) const {
  NoGradGuard no_grad;
  const int64_t batch = u.size(0), length = u.size(1), heads = num_heads_, k = kernel_size_;
  const std::vector<double> w = taps.to_vector();  // [H, K], or [B, T, H, K] (dynamic, DropConnect)
  const bool per_position = taps.dim() == 4;
  std::vector<double> pads(size_t(batch * length), 0.0);
  if (!ctx.causal && ctx.key_padding_mask.defined()) pads = ctx.key_padding_mask.to_vector();
  std::vector<double> map(size_t(batch * heads * length * length), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t t = 0; t < length; ++t)
        for (int64_t j = 0; j < k; ++j) {
          const int64_t s = t + j - padding_left;
          if (s < 0 || s >= length || pads[size_t(b * length + s)] != 0.0) continue;
          const size_t tap = per_position ? size_t(((b * length + t) * heads + h) * k + j) : size_t(h * k + j);
          map[size_t(((b * heads + h) * length + t) * length + s)] = w[tap];
        }
  return from_doubles(map, {batch, heads, length, length}, u.dtype()).to(u.device());  // built on the host, kept with the model
}

std::unique_ptr<MixerState> ConvBlock::init_state(int64_t /*batch*/, const MixerContext& ctx) {
  ATTN_CHECK(ctx.causal, "{}: incremental decoding needs the causal (decoder) convolution", kind());
  return std::make_unique<ConvWindow>();
}

// One step: the window X = (last ≤ K−1 inputs, u_t) of n positions meets the last n taps,
//   O[b,h,:] = Σ_j W̃[b,h,K−n+j] · X[b,j,h,:]   (one small batched product per head).
Tensor ConvBlock::step(const Tensor& x, MixerState& state, const MixerContext& ctx) {
  ATTN_CHECK(x.size(1) == 1, "{}: step takes one position, got {}", kind(), x.size(1));
  ConvWindow& window = as_window(state);
  const Tensor u = conv_input(x);
  const Tensor inputs = window.inputs.defined() ? cat({window.inputs, u}, 1) : u;
  const int64_t batch = x.size(0), n = inputs.size(1), heads = num_heads_, r = conv_dim_ / heads;
  Tensor w = narrow(taps(u), -1, kernel_size_ - n, n);  // [H, n] or [B, 1, H, n]
  w = dynamic_ ? permute(w, {0, 2, 1, 3}) : expand(reshape(w, {1, heads, 1, n}), {batch, heads, 1, n});
  const Tensor heads_view = permute(reshape(inputs, {batch, n, heads, r}), {0, 2, 1, 3});  // [B, H, n, R]
  const Tensor out = reshape(permute(matmul(w, heads_view), {0, 2, 1, 3}), {batch, 1, conv_dim_});
  const int64_t keep = std::min(n, kernel_size_ - 1);
  window.inputs = keep > 0 ? narrow(inputs, 1, n - keep, keep).contiguous() : Tensor();
  return linear2->forward(out);
}

void ConvBlock::reorder(MixerState& state, const Tensor& order) {
  ConvWindow& window = as_window(state);
  if (window.inputs.defined()) window.inputs = index_select(window.inputs, 0, order);
}

}  // namespace attn::nn
