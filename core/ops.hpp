// Tensor-level operations without autograd: shape/dtype validation, output allocation,
// broadcasting, then dispatch to the device's kernels (core/backend.hpp).
// The differentiable versions that models use live in autograd/ops.hpp (namespace attn);
// these raw ones live in attn::ops and are what autograd's forward and backward call.
//
// Errors: shape mismatches name both shapes, dtype mismatches both dtypes, out-of-range
// indices the index and the bound.
#pragma once
#include <vector>

#include "core/kernel_params.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn::ops {

// --- element-wise unary (float dtypes; neg/abs also int) ---
Tensor unary(UnaryOp op, const Tensor& x, UnaryParams p = {});
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor gelu(const Tensor& x);  // exact (erf) form
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
Tensor clamp(const Tensor& x, double low, double high);
Tensor unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, UnaryParams p = {});

// --- binary with NumPy broadcasting (both operands must have the same dtype) ---
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);  // Bool masks
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
// Scalar forms.
Tensor add(const Tensor& a, double s);
Tensor sub(const Tensor& a, double s);
Tensor mul(const Tensor& a, double s);
Tensor div(const Tensor& a, double s);
Tensor rsub(double s, const Tensor& a);  // s - a
Tensor rdiv(double s, const Tensor& a);  // s / a
Tensor eq(const Tensor& a, double s);
Tensor ne(const Tensor& a, double s);
Tensor lt(const Tensor& a, double s);
Tensor le(const Tensor& a, double s);
Tensor gt(const Tensor& a, double s);
Tensor ge(const Tensor& a, double s);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);  // cond Bool, broadcast
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);  // mask Bool, broadcast to x
// In place into an existing tensor (used for gradient accumulation): dst += src (src broadcast to dst).
void add_(const Tensor& dst, const Tensor& src, double alpha = 1.0);

// --- reductions (dims may be negative; empty dims = all dims) ---
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor norm(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);  // L2
struct ValuesIndices { Tensor values, indices; };
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor cumsum(const Tensor& x, int64_t dim, bool reverse = false);
// Sums `grad` (shaped like a broadcast result) down to `shape` — the backward of broadcasting.
Tensor sum_to(const Tensor& grad, const Shape& shape);

// --- matrix products ---
// 1-D/2-D/N-D with NumPy matmul semantics and broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
// out = alpha * a @ b + beta * out, into an existing contiguous out (a, b 2-D or 3-D).
void matmul_into(const Tensor& a, const Tensor& b, const Tensor& out, double alpha = 1.0, double beta = 0.0);

// --- softmax family and normalisation ---
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim, bool log);
struct LayerNormResult { Tensor out, mean, rstd; };
LayerNormResult layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps);
struct LayerNormGrads { Tensor dx, dgamma, dbeta; };
LayerNormGrads layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                   const Tensor& rstd, bool need_affine_grads);

// --- random ---
struct DropoutResult { Tensor out, mask; };
DropoutResult dropout(const Tensor& x, double p, Generator* gen = nullptr);
// residual + dropout(x) in one pass (a Transformer's residual connection); the mask drawn is
// the one dropout(x, p, gen) would draw. residual has x's shape, dtype and device.
DropoutResult dropout_add(const Tensor& x, const Tensor& residual, double p, Generator* gen = nullptr);
// The backward of both: mask ? dy / (1 - p) : 0.
Tensor dropout_backward(const Tensor& dy, const Tensor& mask, double p);

// --- fused bias + ReLU (a Transformer FFN's first layer) ---
// y = relu(y + bias) in place over y [..., F] (contiguous, a fresh product), bias [F] or undefined.
void bias_relu_(const Tensor& y, const Tensor& bias);
// From y = relu(z) and dy: dz = y > 0 ? dy : 0 and, when need_bias_grad, dbias [F] = dz summed
// over all leading dims, in one pass.
struct BiasReluGrads { Tensor dz, dbias; };
BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy, bool need_bias_grad);

// --- banded convolution (LightConv / DynamicConv, docs/models.md §3.1) ---
// out[b,t,c] = Σ_j w[(b,t,) c / (C/H), j] · u[b, t+j−P, c] for u [B, T, C] and taps w [H, K]
// (shared) or [B, T, H, K]; P = padding_left ∈ [0, K−1], C divisible by H.
Tensor banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left);
struct BandedConvGrads { Tensor du, dw; };
BandedConvGrads banded_conv_backward(const Tensor& u, const Tensor& w, const Tensor& dout, int64_t padding_left);

// --- gated linear attention (docs/models.md §5.0, §5.6) ---
// S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k_tᵀ, y_t = S_t q_t per row of q, k [R, T, M], v [R, T, N],
// gates a [R, T, N] and b [R, T, M] in [0, 1] (undefined: ones). `state` [R, N, M] (undefined:
// S_0 = 0) is read as S_0; the result carries y [R, T, N] and S_T.
struct GatedLinearAttentionResult { Tensor y, state; };
GatedLinearAttentionResult gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                                  const Tensor& b, const Tensor& state = {});
// The backward from S_0 = 0: gradients of q, k, v, a, b (the last two undefined when the gate is).
struct GatedLinearAttentionGrads { Tensor dq, dk, dv, da, db; };
GatedLinearAttentionGrads gated_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                          const Tensor& a, const Tensor& b, const Tensor& dy);

// --- delta rule (docs/models.md §5.5) ---
// u_t = β_t (v_t − W_{t−1} k_t), W_t = W_{t−1} + u_t k_tᵀ, y_t = W_t q_t per row of q, k [R, T, M],
// v [R, T, N], beta [R, T]; `state` [R, N, M] (undefined: W_0 = 0) is read as W_0.
struct DeltaRuleResult { Tensor y, state; };
DeltaRuleResult delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                           const Tensor& state = {});
struct DeltaRuleGrads { Tensor dq, dk, dv, dbeta; };
DeltaRuleGrads delta_rule_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                   const Tensor& dy);

// --- shape ops that copy ---
Tensor cat(const std::vector<Tensor>& xs, int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim);  // views
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim);     // views
// Lower/upper triangle of the last two dims (others zeroed); k shifts the diagonal.
Tensor tril(const Tensor& x, int64_t k = 0);
Tensor triu(const Tensor& x, int64_t k = 0);
// Bool [n, m] mask that is true strictly above the diagonal (future positions): the causal mask.
Tensor causal_mask(int64_t n, int64_t m, Device device = Device::cpu());

// --- indexing ---
// Rows of weight [V, D] picked by int64 indices of any shape -> indices.shape + [D].
// Throws naming the offending index and V when an index is out of range.
Tensor embedding(const Tensor& weight, const Tensor& indices);
// The backward: a [V, D] gradient with rows scatter-added (rows equal to padding_idx skipped when >= 0).
Tensor embedding_backward(const Tensor& grad_out, const Tensor& indices, int64_t num_rows, int64_t padding_idx = -1);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& indices);
ValuesIndices topk(const Tensor& x, int64_t k, bool largest = true);  // along the last dim
Tensor gather_last(const Tensor& x, const Tensor& index);  // x [..., N], index int64 [...] -> [...]

// --- losses ---
struct CrossEntropyResult {
  Tensor loss;   // 0-d float64: summed label-smoothed loss over non-ignored targets
  Tensor nll;    // 0-d float64: summed NLL over non-ignored targets
  int64_t count = 0;  // non-ignored targets
  Tensor lse;    // [N]: each row's log-sum-exp of the logits
  Tensor grad;   // with_grad only: d(loss)/d(logits), the logits' shape (0 on ignored rows)
};
// The gradient comes out of the same pass as the loss (the backward of the summed loss is
// `grad` times the incoming gradient); ask for it only when training.
CrossEntropyResult label_smoothed_cross_entropy(const Tensor& logits, const Tensor& targets, double epsilon,
                                                int64_t ignore_index, bool with_grad = false);

}  // namespace attn::ops
