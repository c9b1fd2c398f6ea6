// The CPU implementation of the kernel interface (core/backend.hpp). Each group of kernels
// lives in its own file under core/cpu/: fill/copy and element-wise (elementwise.cpp),
// reductions and cumsum (reduce.cpp), GEMM (matmul.cpp), softmax (softmax.cpp), layer norm
// (layer_norm.cpp), RNG (random.cpp), dropout and its fused forms (dropout.cpp), fused
// bias + ReLU (bias_relu.cpp), the banded convolution (banded_conv.cpp), gated linear
// attention (gated_linear_attention.cpp), the delta rule (delta_rule.cpp), indexing and top-k (indexing.cpp), cross entropy
// (cross_entropy.cpp). Parallel over outer dimensions with OpenMP.
#pragma once
#include "core/backend.hpp"

namespace attn::cpu {

class CpuBackend final : public Backend {
 public:
  void fill(const Tensor& out, double value) override;
  void copy(const Tensor& src, const Tensor& dst) override;
  void unary(UnaryOp op, const Tensor& x, const Tensor& out, UnaryParams p) override;
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) override;
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) override;
  void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& dx, UnaryParams p) override;
  void reduce(ReduceOp op, const Tensor& x, const Tensor& out) override;
  void arg_reduce(bool is_max, const Tensor& x, int dim, const Tensor& values, const Tensor& indices) override;
  void cumsum(const Tensor& x, int dim, bool reverse, const Tensor& out) override;
  void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) override;
  void softmax(const Tensor& x, const Tensor& out, bool log) override;
  void softmax_backward(const Tensor& y, const Tensor& dy, const Tensor& dx, bool log) override;
  void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, const Tensor& out,
                  const Tensor& mean, const Tensor& rstd) override;
  void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                           const Tensor& rstd, const Tensor& dx, const Tensor& dgamma, const Tensor& dbeta) override;
  void uniform(const Tensor& out, double low, double high, uint64_t seed, uint64_t first) override;
  void normal(const Tensor& out, double mean, double stddev, uint64_t seed, uint64_t first) override;
  void dropout(const Tensor& x, double p, uint64_t seed, uint64_t first, const Tensor& out, const Tensor& mask) override;
  void dropout_add(const Tensor& x, const Tensor& residual, double p, uint64_t seed, uint64_t first, const Tensor& out,
                   const Tensor& mask) override;
  void dropout_backward(const Tensor& dy, const Tensor& mask, double scale, const Tensor& dx) override;
  void bias_relu(const Tensor& y, const Tensor& bias) override;
  void bias_relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) override;
  void banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left, const Tensor& out) override;
  void banded_conv_backward(const Tensor& u, const Tensor& w, const Tensor& dout, int64_t padding_left,
                            const Tensor& du, const Tensor& dw) override;
  void gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a, const Tensor& b,
                              const Tensor& state, const Tensor& y) override;
  void gated_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                       const Tensor& b, const Tensor& dy, const Tensor& dq, const Tensor& dk,
                                       const Tensor& dv, const Tensor& da, const Tensor& db) override;
  void delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& state,
                  const Tensor& y) override;
  void delta_rule_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& dy,
                           const Tensor& dq, const Tensor& dk, const Tensor& dv, const Tensor& dbeta) override;
  void index_select_rows(const Tensor& weight, const Tensor& indices, const Tensor& out) override;
  void index_add_rows(const Tensor& grad_weight, const Tensor& indices, const Tensor& src) override;
  void topk(const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices) override;
  void gather_last(const Tensor& x, const Tensor& index, const Tensor& out) override;
  void label_smoothed_ce(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                         const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count) override;
  void label_smoothed_ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, double epsilon,
                                  int64_t ignore_index, double scale, const Tensor& grad_logits) override;
};

}  // namespace attn::cpu
