// Kernel timing decorator (core/profiling_backend.hpp).
#include "core/profiling_backend.hpp"

#include <array>
#include <memory>

#include "core/profiler.hpp"

namespace attn {
namespace {

using profiler::ProfileScope;

class ProfilingBackend final : public Backend {
 public:
  explicit ProfilingBackend(Backend& inner) : in_(inner) {}

  void fill(const Tensor& out, double value) override {
    ProfileScope s("fill");
    in_.fill(out, value);
  }
  void copy(const Tensor& src, const Tensor& dst) override {
    ProfileScope s("copy");
    in_.copy(src, dst);
  }
  void unary(UnaryOp op, const Tensor& x, const Tensor& out, UnaryParams p) override {
    ProfileScope s("unary");
    in_.unary(op, x, out, p);
  }
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) override {
    ProfileScope s("binary");
    in_.binary(op, a, b, out);
  }
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) override {
    ProfileScope s("where");
    in_.where(cond, a, b, out);
  }
  void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& dx,
                      UnaryParams p) override {
    ProfileScope s("unary_backward");
    in_.unary_backward(op, x, y, dy, dx, p);
  }
  void reduce(ReduceOp op, const Tensor& x, const Tensor& out) override {
    ProfileScope s("reduce");
    in_.reduce(op, x, out);
  }
  void arg_reduce(bool is_max, const Tensor& x, int dim, const Tensor& values, const Tensor& indices) override {
    ProfileScope s("arg_reduce");
    in_.arg_reduce(is_max, x, dim, values, indices);
  }
  void cumsum(const Tensor& x, int dim, bool reverse, const Tensor& out) override {
    ProfileScope s("cumsum");
    in_.cumsum(x, dim, reverse, out);
  }
  void batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) override {
    ProfileScope s("batched_gemm");
    in_.batched_gemm(a, b, out, alpha, beta);
  }
  void softmax(const Tensor& x, const Tensor& out, bool log) override {
    ProfileScope s("softmax");
    in_.softmax(x, out, log);
  }
  void softmax_backward(const Tensor& y, const Tensor& dy, const Tensor& dx, bool log) override {
    ProfileScope s("softmax_backward");
    in_.softmax_backward(y, dy, dx, log);
  }
  void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, const Tensor& out,
                  const Tensor& mean, const Tensor& rstd) override {
    ProfileScope s("layer_norm");
    in_.layer_norm(x, gamma, beta, eps, out, mean, rstd);
  }
  void layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                           const Tensor& rstd, const Tensor& dx, const Tensor& dgamma, const Tensor& dbeta) override {
    ProfileScope s("layer_norm_backward");
    in_.layer_norm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
  }
  void uniform(const Tensor& out, double low, double high, uint64_t seed, uint64_t first) override {
    ProfileScope s("uniform");
    in_.uniform(out, low, high, seed, first);
  }
  void normal(const Tensor& out, double mean, double stddev, uint64_t seed, uint64_t first) override {
    ProfileScope s("normal");
    in_.normal(out, mean, stddev, seed, first);
  }
  void dropout(const Tensor& x, double p, uint64_t seed, uint64_t first, const Tensor& out,
               const Tensor& mask) override {
    ProfileScope s("dropout");
    in_.dropout(x, p, seed, first, out, mask);
  }
  void dropout_add(const Tensor& x, const Tensor& residual, double p, uint64_t seed, uint64_t first, const Tensor& out,
                   const Tensor& mask) override {
    ProfileScope s("dropout_add");
    in_.dropout_add(x, residual, p, seed, first, out, mask);
  }
  void dropout_backward(const Tensor& dy, const Tensor& mask, double scale, const Tensor& dx) override {
    ProfileScope s("dropout_backward");
    in_.dropout_backward(dy, mask, scale, dx);
  }
  void bias_relu(const Tensor& y, const Tensor& bias) override {
    ProfileScope s("bias_relu");
    in_.bias_relu(y, bias);
  }
  void bias_relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) override {
    ProfileScope s("bias_relu_backward");
    in_.bias_relu_backward(y, dy, dz, dbias);
  }
  void banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left, const Tensor& out) override {
    ProfileScope s("banded_conv");
    in_.banded_conv(u, w, padding_left, out);
  }
  void banded_conv_backward(const Tensor& u, const Tensor& w, const Tensor& dout, int64_t padding_left,
                            const Tensor& du, const Tensor& dw) override {
    ProfileScope s("banded_conv_backward");
    in_.banded_conv_backward(u, w, dout, padding_left, du, dw);
  }
  void gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a, const Tensor& b,
                              const Tensor& state, const Tensor& y) override {
    ProfileScope s("gated_linear_attention");
    in_.gated_linear_attention(q, k, v, a, b, state, y);
  }
  void gated_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                       const Tensor& b, const Tensor& dy, const Tensor& dq, const Tensor& dk,
                                       const Tensor& dv, const Tensor& da, const Tensor& db) override {
    ProfileScope s("gated_linear_attention_backward");
    in_.gated_linear_attention_backward(q, k, v, a, b, dy, dq, dk, dv, da, db);
  }
  void delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& state,
                  const Tensor& y) override {
    ProfileScope s("delta_rule");
    in_.delta_rule(q, k, v, beta, state, y);
  }
  void delta_rule_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta, const Tensor& dy,
                           const Tensor& dq, const Tensor& dk, const Tensor& dv, const Tensor& dbeta) override {
    ProfileScope s("delta_rule_backward");
    in_.delta_rule_backward(q, k, v, beta, dy, dq, dk, dv, dbeta);
  }
  void index_select_rows(const Tensor& weight, const Tensor& indices, const Tensor& out) override {
    ProfileScope s("index_select_rows");
    in_.index_select_rows(weight, indices, out);
  }
  void index_add_rows(const Tensor& grad_weight, const Tensor& indices, const Tensor& src) override {
    ProfileScope s("index_add_rows");
    in_.index_add_rows(grad_weight, indices, src);
  }
  void topk(const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices) override {
    ProfileScope s("topk");
    in_.topk(x, k, largest, values, indices);
  }
  void gather_last(const Tensor& x, const Tensor& index, const Tensor& out) override {
    ProfileScope s("gather_last");
    in_.gather_last(x, index, out);
  }
  void label_smoothed_ce(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                         const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count) override {
    ProfileScope s("label_smoothed_ce");
    in_.label_smoothed_ce(logits, targets, epsilon, ignore_index, lse, loss, nll, count);
  }
  void label_smoothed_ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse, double epsilon,
                                  int64_t ignore_index, double scale, const Tensor& grad_logits) override {
    ProfileScope s("label_smoothed_ce_backward");
    in_.label_smoothed_ce_backward(logits, targets, lse, epsilon, ignore_index, scale, grad_logits);
  }

 private:
  Backend& in_;
};

}  // namespace

Backend& profiling_backend(DeviceType type, Backend& inner) {
  static std::array<std::unique_ptr<ProfilingBackend>, 2>* decorators =
      new std::array<std::unique_ptr<ProfilingBackend>, 2>;  // never destroyed, like the backends
  std::unique_ptr<ProfilingBackend>& slot = (*decorators)[size_t(type)];
  if (!slot) slot = std::make_unique<ProfilingBackend>(inner);
  return *slot;
}

}  // namespace attn
