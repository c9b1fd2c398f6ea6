// Softmax family, layer norm, fused bias + ReLU and the fused label-smoothed cross entropy at
// the tensor level (core/ops.hpp): validation and output allocation, then the backend's
// last-dim kernels.
// A softmax over another dim moves that dim last (permute + one contiguous copy) and the
// result is permuted back (a view). Cross entropy: docs/models.md §1.6, legacy eps/V form.
#include "core/backend.hpp"
#include "core/ops.hpp"

namespace attn::ops {
namespace {

void check_floating(const char* op, const Tensor& x, const char* name) {
  ATTN_CHECK(x.defined(), "{}: {} is undefined", op, name);
  ATTN_CHECK(is_floating(x.dtype()), "{}: {} must be float32 or float64, got {}", op, name, dtype_name(x.dtype()));
}

// t must be defined with the given shape, dtype and device; `what` names what fixes them.
void check_tensor(const char* op, const Tensor& t, const char* name, const Shape& shape, DType dtype, Device device,
                  const char* what) {
  ATTN_CHECK(t.defined(), "{}: {} is undefined", op, name);
  ATTN_CHECK(t.shape() == shape, "{}: {} has shape {} but {} needs {}", op, name, t.shape().str(), what, shape.str());
  ATTN_CHECK(t.dtype() == dtype, "{}: {} is {} but {} is {}", op, name, dtype_name(t.dtype()), what, dtype_name(dtype));
  ATTN_CHECK(t.device() == device, "{}: {} is on {} but {} on {}", op, name, t.device().str(), what, device.str());
}

// `other` must match `ref` in shape, dtype and device.
void check_like(const char* op, const Tensor& ref, const char* ref_name, const Tensor& other, const char* other_name) {
  check_tensor(op, other, other_name, ref.shape(), ref.dtype(), ref.device(), ref_name);
}

// 0-d tensors are treated as 1-element vectors by the last-dim kernels.
Tensor at_least_1d(const Tensor& x) { return x.dim() == 0 ? x.data_only().reshape({1}) : x; }

// The permutation of `ndim` dims that moves `dim` last, and its inverse.
std::vector<int> moving_dim_last(int dim, int ndim) {
  std::vector<int> perm;
  for (int d = 0; d < ndim; ++d)
    if (d != dim) perm.push_back(d);
  perm.push_back(dim);
  return perm;
}

std::vector<int> inverse_permutation(const std::vector<int>& perm) {
  std::vector<int> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = int(i);
  return inverse;
}

Tensor softmax_along(const Tensor& input, int64_t dim, bool log) {
  check_floating(log ? "log_softmax" : "softmax", input, "input");
  const Tensor x = at_least_1d(input);
  const std::vector<int> perm = moving_dim_last(wrap_dim(dim, input.dim()), x.dim());
  const Tensor x_last = x.permute(perm).contiguous();
  Tensor out(x_last.shape(), x.dtype(), x.device());
  backend_for(x.device()).softmax(x_last, out, log);
  return out.permute(inverse_permutation(perm)).reshape(input.shape());
}

Shape leading_dims(const Shape& s) {
  Shape out;
  for (int i = 0; i + 1 < s.size(); ++i) out.push_back(s[i]);
  return out;
}

// gamma/beta of layer norm: undefined, or [D] with x's dtype and device.
void check_affine(const Tensor& x, const Tensor& param, const char* name) {
  if (param.defined()) check_tensor("layer_norm", param, name, Shape{x.size(-1)}, x.dtype(), x.device(), "input");
}

Tensor contiguous_or_undefined(const Tensor& t) { return t.defined() ? t.contiguous() : t; }

// logits [..., V] viewed as [N, V] and targets [...] as int64 [N], after checking both.
struct CrossEntropyInputs {
  Tensor logits, targets;
};

CrossEntropyInputs cross_entropy_inputs(const char* op, const Tensor& logits, const Tensor& targets, double epsilon) {
  check_floating(op, logits, "logits");
  ATTN_CHECK(logits.dim() >= 1 && logits.size(-1) > 0, "{}: logits need a non-empty class dim, got shape {}", op,
             logits.shape().str());
  ATTN_CHECK(targets.defined() && targets.shape() == leading_dims(logits.shape()),
             "{}: targets of shape {} do not match logits of shape {} (expected {})", op,
             targets.defined() ? targets.shape().str() : "undefined", logits.shape().str(),
             leading_dims(logits.shape()).str());
  ATTN_CHECK(targets.dtype() == DType::Int64 || targets.dtype() == DType::Int32, "{}: targets must be int64, got {}",
             op, dtype_name(targets.dtype()));
  ATTN_CHECK(targets.device() == logits.device(), "{}: targets are on {} but logits on {}", op,
             targets.device().str(), logits.device().str());
  ATTN_CHECK(epsilon >= 0.0 && epsilon <= 1.0, "{}: epsilon must be in [0, 1], got {}", op, epsilon);
  const int64_t classes = logits.size(-1);
  return {logits.data_only().contiguous().reshape({-1, classes}),
          targets.to(DType::Int64).data_only().contiguous().reshape({-1})};
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_along(x, dim, false); }

Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_along(x, dim, true); }

Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  check_floating(op, y, "output");
  check_like(op, y, "output", dy, "grad");
  const Tensor y1 = at_least_1d(y), dy1 = at_least_1d(dy);
  const std::vector<int> perm = moving_dim_last(wrap_dim(dim, y.dim()), y1.dim());
  const Tensor y_last = y1.permute(perm).contiguous(), dy_last = dy1.permute(perm).contiguous();
  Tensor dx(y_last.shape(), y.dtype(), y.device());
  backend_for(y.device()).softmax_backward(y_last, dy_last, dx, log);
  return dx.permute(inverse_permutation(perm)).reshape(y.shape());
}

LayerNormResult layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  check_floating("layer_norm", x, "input");
  ATTN_CHECK(x.dim() >= 1, "layer_norm: input must have at least 1 dim, got shape {}", x.shape().str());
  ATTN_CHECK(eps >= 0.0, "layer_norm: eps must be non-negative, got {}", eps);
  check_affine(x, gamma, "gamma");
  check_affine(x, beta, "beta");
  LayerNormResult r{Tensor(x.shape(), x.dtype(), x.device()), Tensor(leading_dims(x.shape()), x.dtype(), x.device()),
                    Tensor(leading_dims(x.shape()), x.dtype(), x.device())};
  backend_for(x.device()).layer_norm(x.contiguous(), contiguous_or_undefined(gamma), contiguous_or_undefined(beta), eps,
                                     r.out, r.mean, r.rstd);
  return r;
}

LayerNormGrads layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                   const Tensor& rstd, bool need_affine_grads) {
  check_floating("layer_norm_backward", x, "input");
  check_like("layer_norm_backward", x, "input", dy, "grad");
  check_affine(x, gamma, "gamma");
  const Shape rows = leading_dims(x.shape());
  check_tensor("layer_norm_backward", mean, "mean", rows, x.dtype(), x.device(), "input");
  check_tensor("layer_norm_backward", rstd, "rstd", rows, x.dtype(), x.device(), "input");
  LayerNormGrads g{Tensor(x.shape(), x.dtype(), x.device()), {}, {}};
  if (need_affine_grads) {
    g.dgamma = Tensor(Shape{x.size(-1)}, x.dtype(), x.device());
    g.dbeta = Tensor(Shape{x.size(-1)}, x.dtype(), x.device());
  }
  backend_for(x.device()).layer_norm_backward(dy.contiguous(), x.contiguous(), contiguous_or_undefined(gamma),
                                              mean.contiguous(), rstd.contiguous(), g.dx, g.dgamma, g.dbeta);
  return g;
}

void bias_relu_(const Tensor& y, const Tensor& bias) {
  check_floating("bias_relu_", y, "input");
  ATTN_CHECK(y.dim() >= 1 && y.is_contiguous(), "bias_relu_: input must be contiguous with at least 1 dim, got {}",
             y.shape().str());
  if (bias.defined()) check_tensor("bias_relu_", bias, "bias", Shape{y.size(-1)}, y.dtype(), y.device(), "input");
  backend_for(y.device()).bias_relu(y, bias);
}

BiasReluGrads bias_relu_backward(const Tensor& y, const Tensor& dy, bool need_bias_grad) {
  check_floating("bias_relu_backward", y, "output");
  check_like("bias_relu_backward", y, "output", dy, "grad");
  ATTN_CHECK(y.dim() >= 1, "bias_relu_backward: output must have at least 1 dim, got shape {}", y.shape().str());
  BiasReluGrads g{Tensor(y.shape(), y.dtype(), y.device()), {}};
  if (need_bias_grad) g.dbias = Tensor(Shape{y.size(-1)}, y.dtype(), y.device());
  backend_for(y.device()).bias_relu_backward(y.contiguous(), dy, g.dz, g.dbias);
  return g;
}

namespace {

void check_banded_conv(const char* op, const Tensor& u, const Tensor& w, int64_t padding_left) {
  check_floating(op, u, "input");
  ATTN_CHECK(u.dim() == 3, "{}: input must be [B, T, C], got shape {}", op, u.shape().str());
  ATTN_CHECK(w.defined() && w.dtype() == u.dtype() && w.device() == u.device(),
             "{}: taps must be defined with the input's dtype and device", op);
  const bool shared = w.dim() == 2;
  ATTN_CHECK(shared || (w.dim() == 4 && w.size(0) == u.size(0) && w.size(1) == u.size(1)),
             "{}: taps must be [H, K] or [B, T, H, K] = [{}, {}, H, K], got shape {}", op, u.size(0), u.size(1),
             w.shape().str());
  const int64_t heads = w.size(-2), kernel = w.size(-1);
  ATTN_CHECK(heads > 0 && kernel > 0 && u.size(2) % heads == 0,
             "{}: {} channels cannot be split into the taps' {} heads (taps {})", op, u.size(2), heads, w.shape().str());
  ATTN_CHECK(padding_left >= 0 && padding_left < kernel, "{}: padding_left {} outside [0, {}] for kernel size {}", op,
             padding_left, kernel - 1, kernel);
}

}  // namespace

Tensor banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left) {
  check_banded_conv("banded_conv", u, w, padding_left);
  Tensor out(u.shape(), u.dtype(), u.device());
  backend_for(u.device()).banded_conv(u.contiguous(), w.contiguous(), padding_left, out);
  return out;
}

BandedConvGrads banded_conv_backward(const Tensor& u, const Tensor& w, const Tensor& dout, int64_t padding_left) {
  check_banded_conv("banded_conv_backward", u, w, padding_left);
  check_like("banded_conv_backward", u, "input", dout, "grad");
  BandedConvGrads g{Tensor(u.shape(), u.dtype(), u.device()), Tensor(w.shape(), w.dtype(), w.device())};
  backend_for(u.device()).banded_conv_backward(u.contiguous(), w.contiguous(), dout.contiguous(), padding_left, g.du,
                                               g.dw);
  return g;
}

namespace {

void check_gated_linear_attention(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                  const Tensor& b) {
  check_floating(op, q, "queries");
  ATTN_CHECK(q.dim() == 3, "{}: queries must be [R, T, M], got shape {}", op, q.shape().str());
  check_like(op, q, "queries", k, "keys");
  ATTN_CHECK(v.defined() && v.dim() == 3 && v.size(0) == q.size(0) && v.size(1) == q.size(1) &&
                 v.dtype() == q.dtype() && v.device() == q.device(),
             "{}: values must be [{}, {}, N] like the queries, got {}", op, q.size(0), q.size(1),
             v.defined() ? v.shape().str() : "undefined");
  if (a.defined()) check_like(op, v, "values", a, "value gates");
  if (b.defined()) check_like(op, q, "queries", b, "key gates");
}

// The state tensor of a recurrence: a copy of `initial` (checked against `shape`), or zeros.
Tensor initial_state(const char* op, const Tensor& initial, const Shape& shape, const Tensor& like) {
  Tensor state(shape, like.dtype(), like.device());
  if (!initial.defined()) {
    state.zero_();
    return state;
  }
  ATTN_CHECK(initial.shape() == shape && initial.dtype() == like.dtype(), "{}: state must be {} {}, got {} {}", op,
             shape.str(), dtype_name(like.dtype()), initial.shape().str(), dtype_name(initial.dtype()));
  state.copy_(initial);
  return state;
}

// Contiguous, or undefined when t is.
Tensor contiguous_or_none(const Tensor& t) { return t.defined() ? t.contiguous() : Tensor(); }

}  // namespace

GatedLinearAttentionResult gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                                  const Tensor& b, const Tensor& state) {
  check_gated_linear_attention("gated_linear_attention", q, k, v, a, b);
  GatedLinearAttentionResult r{Tensor(v.shape(), v.dtype(), v.device()),
                               initial_state("gated_linear_attention", state, {q.size(0), v.size(2), q.size(2)}, q)};
  backend_for(q.device()).gated_linear_attention(q.contiguous(), k.contiguous(), v.contiguous(), contiguous_or_none(a),
                                                 contiguous_or_none(b), r.state, r.y);
  return r;
}

GatedLinearAttentionGrads gated_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                          const Tensor& a, const Tensor& b, const Tensor& dy) {
  check_gated_linear_attention("gated_linear_attention_backward", q, k, v, a, b);
  check_like("gated_linear_attention_backward", v, "values", dy, "grad");
  auto like = [](const Tensor& t) { return t.defined() ? Tensor(t.shape(), t.dtype(), t.device()) : Tensor(); };
  GatedLinearAttentionGrads g{like(q), like(k), like(v), like(a), like(b)};
  backend_for(q.device()).gated_linear_attention_backward(q.contiguous(), k.contiguous(), v.contiguous(),
                                                          contiguous_or_none(a), contiguous_or_none(b), dy.contiguous(),
                                                          g.dq, g.dk, g.dv, g.da, g.db);
  return g;
}

namespace {

void check_delta_rule(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta) {
  check_gated_linear_attention(op, q, k, v, Tensor(), Tensor());
  check_tensor(op, beta, "write strengths", Shape{q.size(0), q.size(1)}, q.dtype(), q.device(), "the queries' [R, T]");
}

}  // namespace

DeltaRuleResult delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& state) {
  check_delta_rule("delta_rule", q, k, v, beta);
  DeltaRuleResult r{Tensor(v.shape(), v.dtype(), v.device()),
                    initial_state("delta_rule", state, {q.size(0), v.size(2), q.size(2)}, q)};
  backend_for(q.device()).delta_rule(q.contiguous(), k.contiguous(), v.contiguous(), beta.contiguous(), r.state, r.y);
  return r;
}

DeltaRuleGrads delta_rule_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                   const Tensor& dy) {
  check_delta_rule("delta_rule_backward", q, k, v, beta);
  check_like("delta_rule_backward", v, "values", dy, "grad");
  auto like = [](const Tensor& t) { return Tensor(t.shape(), t.dtype(), t.device()); };
  DeltaRuleGrads g{like(q), like(k), like(v), like(beta)};
  backend_for(q.device()).delta_rule_backward(q.contiguous(), k.contiguous(), v.contiguous(), beta.contiguous(),
                                              dy.contiguous(), g.dq, g.dk, g.dv, g.dbeta);
  return g;
}

CrossEntropyResult label_smoothed_cross_entropy(const Tensor& logits, const Tensor& targets, double epsilon,
                                                int64_t ignore_index, bool with_grad) {
  const CrossEntropyInputs in = cross_entropy_inputs("label_smoothed_cross_entropy", logits, targets, epsilon);
  const Device device = logits.device();
  CrossEntropyResult r;
  r.loss = Tensor(Shape{}, DType::Float64, device);
  r.nll = Tensor(Shape{}, DType::Float64, device);
  r.lse = Tensor(Shape{in.logits.size(0)}, logits.dtype(), device);
  if (with_grad) r.grad = Tensor(in.logits.shape(), logits.dtype(), device);
  const Tensor count(Shape{}, DType::Float64, device);
  backend_for(device).label_smoothed_ce(in.logits, in.targets, epsilon, ignore_index, r.lse, r.loss, r.nll, count,
                                        r.grad);
  r.count = int64_t(count.item());
  if (with_grad) r.grad = r.grad.view(logits.shape());
  return r;
}

}  // namespace attn::ops
