// The kernel interface: everything a device must implement to run attnlab's ops.
// core/cpu/ implements it for the CPU, cuda/ for CUDA GPUs; core/ops.cpp picks the backend
// from the tensors' device at run time, so model code never names a device.
//
// Conventions for every kernel:
// * Inputs may be strided views (including stride-0 broadcast dims); outputs are freshly
//   allocated contiguous tensors unless stated otherwise. Shapes and dtypes were already
//   validated by core/ops.cpp, so kernels do not re-check them.
// * Float kernels support float32 and float64.
#pragma once
#include <cstdint>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn {

enum class UnaryOp {
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Relu, Elu, Gelu, Sigmoid, Tanh, Sin, Cos,
  Pow,    // x^a
  Clamp,  // min(max(x, a), b)
  Reciprocal, Square,
  // Scalar forms of the binary ops: x op a
  AddScalar, MulScalar, RSubScalar /* a - x */, RDivScalar /* a / x */,
};

struct UnaryParams {
  double a = 0.0;  // Pow: exponent; Elu: alpha; Clamp: low; *Scalar: the scalar
  double b = 0.0;  // Clamp: high
};

enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge };
inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

enum class ReduceOp { Sum, Mean, Max, Min, LogSumExp, Norm2, Prod };

class Backend {
 public:
  virtual ~Backend() = default;

  // --- memory ---
  virtual void fill(const Tensor& out, double value) = 0;              // out may be strided
  virtual void copy(const Tensor& src, const Tensor& dst) = 0;         // same shape; converts dtype; dst may be strided

  // --- element-wise ---
  virtual void unary(UnaryOp op, const Tensor& x, const Tensor& out, UnaryParams p) = 0;
  // a and b are already expanded to out's shape; comparisons write Bool.
  virtual void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) = 0;
  // out = cond ? a : b, all expanded to out's shape.
  virtual void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) = 0;
  // Element-wise backward helpers: dx = dy * f'(x) (y = f(x) is given for ops where that is cheaper).
  virtual void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& dx, UnaryParams p) = 0;

  // --- reductions ---
  // Reduces x over the dims where out (same ndim, keepdim form) has extent 1 and x does not.
  virtual void reduce(ReduceOp op, const Tensor& x, const Tensor& out) = 0;
  // Max/min along one dim with their index (int64); values and indices in keepdim form.
  virtual void arg_reduce(bool is_max, const Tensor& x, int dim, const Tensor& values, const Tensor& indices) = 0;
  virtual void cumsum(const Tensor& x, int dim, bool reverse, const Tensor& out) = 0;

  // --- matrix products ---
  // out[b] = alpha * a[b] @ b[b] + beta * out[b] for 3-D views a [B,M,K], b [B,K,N],
  // out [B,M,N] (contiguous). Transposed operands are detected from the strides and passed
  // to BLAS as flags; batch strides may be 0 (broadcast). All three may instead be 4-D
  // with two batch dims of independent strides [B0,B1,M,K]; then out's matrices need only
  // unit column stride and a row stride >= N (e.g. heads interleaved in [B,T,H,d]).
  virtual void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) = 0;

  // --- normalisation and softmax (along the last dim of contiguous x) ---
  virtual void softmax(const Tensor& x, const Tensor& out, bool log) = 0;
  // dx from y = softmax(x) (or log_softmax when log) and dy.
  virtual void softmax_backward(const Tensor& y, const Tensor& dy, const Tensor& dx, bool log) = 0;
  // Over the last dim: out = (x - mean) * rstd * gamma + beta; mean/rstd [rows] saved for backward.
  // gamma/beta may be undefined (no affine).
  virtual void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps,
                          const Tensor& out, const Tensor& mean, const Tensor& rstd) = 0;
  // dgamma/dbeta may be undefined; when defined they are overwritten.
  virtual void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                   const Tensor& rstd, const Tensor& dx, const Tensor& dgamma, const Tensor& dbeta) = 0;

  // --- random ---
  // out[i] = uniform in [low, high) from Philox(seed, first + i) (float64 draws use two counters).
  virtual void uniform(const Tensor& out, double low, double high, uint64_t seed, uint64_t first) = 0;
  virtual void normal(const Tensor& out, double mean, double stddev, uint64_t seed, uint64_t first) = 0;
  // Inverted dropout: keep = uniform >= p; out = keep ? x / (1 - p) : 0; mask (Bool) records keep.
  virtual void dropout(const Tensor& x, double p, uint64_t seed, uint64_t first, const Tensor& out, const Tensor& mask) = 0;
  // Dropout fused with the residual add that follows it in a Transformer layer:
  // out = residual + (keep ? x / (1 - p) : 0), keep drawn exactly as dropout() draws it.
  virtual void dropout_add(const Tensor& x, const Tensor& residual, double p, uint64_t seed, uint64_t first,
                           const Tensor& out, const Tensor& mask) = 0;
  // The backward of dropout: dx = mask ? dy * scale : 0 (scale = 1 / (1 - p)).
  virtual void dropout_backward(const Tensor& dy, const Tensor& mask, double scale, const Tensor& dx) = 0;

  // --- fused bias + ReLU (the first layer of a Transformer FFN) ---
  // In place over the contiguous [rows, cols] y (a product x Wᵀ): y = relu(y + bias), bias [cols] or
  // undefined (then y = relu(y)).
  virtual void bias_relu(const Tensor& y, const Tensor& bias) = 0;
  // From y = relu(z) [rows, cols] (contiguous) and dy (same shape): dz = y > 0 ? dy : 0 and,
  // when dbias [cols] is defined, dbias = the column sums of dz, in the same pass.
  virtual void bias_relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) = 0;

  // --- banded convolution (LightConv / DynamicConv, docs/models.md §3.1, §3.4) ---
  // u [B, T, C] and out [B, T, C] contiguous, C = H·R; taps w contiguous, [H, K] (shared by
  // every position) or [B, T, H, K] (one set per position):
  //   out[b,t,c] = Σ_j w[(b,t,) c / R, j] · u[b, t + j − P, c]     (u = 0 outside [0, T))
  virtual void banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left, const Tensor& out) = 0;
  // Its backward: du [B, T, C] and dw (w's shape; for shared taps summed over b and t) from
  // dout, both overwritten. Deterministic at any thread count.
  virtual void banded_conv_backward(const Tensor& u, const Tensor& w, const Tensor& dout, int64_t padding_left,
                                    const Tensor& du, const Tensor& dw) = 0;

  // --- gated linear attention (kernelized / decaying attention, docs/models.md §5.0, §5.6) ---
  // Per row r of q, k [R, T, M] and v [R, T, N] (all contiguous), with gates a [R, T, N] and
  // b [R, T, M] (each undefined: all ones):
  //   S_t = (a_t b_tᵀ) ⊙ S_{t−1} + v_t k_tᵀ,   y_t = S_t q_t       (S ∈ ℝ^{N×M})
  // state [R, N, M] holds S_0 on entry and S_T on return; y [R, T, N] is overwritten.
  virtual void gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                      const Tensor& b, const Tensor& state, const Tensor& y) = 0;
  // Its backward from S_0 = 0: dq, dk, dv and da, db (undefined when the gate is) from dy, all
  // overwritten; S is recomputed per chunk, never rebuilt by dividing by a gate.
  virtual void gated_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                               const Tensor& b, const Tensor& dy, const Tensor& dq, const Tensor& dk,
                                               const Tensor& dv, const Tensor& da, const Tensor& db) = 0;

  // --- delta rule (docs/models.md §5.5) ---
  // Per row r of q, k [R, T, M], v [R, T, N] and write strengths beta [R, T] (all contiguous):
  //   u_t = β_t (v_t − W_{t−1} k_t),   W_t = W_{t−1} + u_t k_tᵀ,   y_t = W_t q_t   (W ∈ ℝ^{N×M})
  // state [R, N, M] holds W_0 on entry and W_T on return; y [R, T, N] is overwritten.
  virtual void delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& state,
                          const Tensor& y) = 0;
  // Its backward from W_0 = 0: dq, dk, dv, dbeta (overwritten) from dy; W recomputed per chunk.
  virtual void delta_rule_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                   const Tensor& dy, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                   const Tensor& dbeta) = 0;

  // --- indexing ---
  // out[i, :] = weight[indices[i], :]; indices int64 [N] (validated in range), weight [V, D].
  virtual void index_select_rows(const Tensor& weight, const Tensor& indices, const Tensor& out) = 0;
  // grad_weight[indices[i], :] += src[i, :] (deterministic order).
  virtual void index_add_rows(const Tensor& grad_weight, const Tensor& indices, const Tensor& src) = 0;
  // Top-k along the last dim of contiguous x [R, N]: values and int64 indices [R, k],
  // sorted descending (largest) or ascending; ties keep the lower index first.
  virtual void topk(const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices) = 0;
  // Gathers one element per row: out[r] = x[r, index[r]] (x contiguous [R, N]).
  virtual void gather_last(const Tensor& x, const Tensor& index, const Tensor& out) = 0;

  // --- losses ---
  // Label-smoothed cross entropy over logits [N, V] (contiguous) and targets int64 [N]
  // (docs/models.md §1.6, legacy eps/V form). Rows whose target == ignore_index contribute
  // nothing. Writes per-row log-sum-exp [N] (for backward), and returns through the 0-d
  // float64 outputs the summed smoothed loss, the summed NLL and the non-ignored count.
  virtual void label_smoothed_ce(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                                 const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count) = 0;
  // grad_logits = scale * d(loss)/d(logits) using the saved lse.
  virtual void label_smoothed_ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, double epsilon,
                                          int64_t ignore_index, double scale, const Tensor& grad_logits) = 0;
};

// The backend serving a device; throws when that device type was not built in.
Backend& backend_for(Device device);
void register_backend(DeviceType type, Backend* backend);

}  // namespace attn
