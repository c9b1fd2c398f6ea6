// The CUDA implementation of the kernel interface (core/backend.hpp): every kernel of the
// table, the fused attention forward and the attention variants' (banded convolution, gated
// linear attention, delta rule) included. One stream and one cuBLAS handle per device, created when the backend is;
// every kernel of a device is queued on that stream, so kernels of one device run in order
// and the host waits only in synchronize(), in copies to host memory and in the cross
// entropy, which reads back whether a target was out of range (to name it in its error).
//
// The kernels take float32 tensors and say so in their error otherwise; fill and copy take
// every dtype (copy converts between them, within a device and to or from the host), cumsum
// float32 and int64. Inputs may be strided views: the launches that read contiguous data get
// a contiguous copy made on the device first. All kernel bodies are those of cuda/kernels/,
// tested on the CPU emulator; the whole backend is also built on an emulated CUDA runtime
// (cuda/emulator/runtime/, the attnlab_cuda_emulated target) and tested there against the CPU
// (tests/cuda/).
#pragma once
#include <vector>

#include "core/backend.hpp"

namespace attn::cuda {

class CudaBackend final : public BackendBase<CudaBackend> {
 public:
  explicit CudaBackend(int device_count);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  const char* name() const override { return "cuda"; }
  Stream stream(Device device) override;
  void synchronize() override;

  void fill(const Tensor& out, double value) override;
  void copy(const Tensor& src, const Tensor& dst) override;
  void unary(UnaryOp op, const Tensor& x, const Tensor& out, UnaryParams p) override;
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) override;
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) override;
  void unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& dx,
                      UnaryParams p) override;
  void bias_relu(const Tensor& y, const Tensor& bias) override;
  void bias_relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) override;
  void index_select_rows(const Tensor& weight, const Tensor& indices, const Tensor& out) override;
  void index_add_rows(const Tensor& grad_weight, const Tensor& indices, const Tensor& src) override;
  void topk(const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices) override;
  void gather_last(const Tensor& x, const Tensor& index, const Tensor& out) override;
  void uniform(const Tensor& out, double low, double high, uint64_t seed, uint64_t first) override;
  void normal(const Tensor& out, double mean, double stddev, uint64_t seed, uint64_t first) override;
  void dropout(const Tensor& x, double p, uint64_t seed, uint64_t first, const Tensor& out,
               const Tensor& mask) override;
  void dropout_add(const Tensor& x, const Tensor& residual, double p, uint64_t seed, uint64_t first, const Tensor& out,
                   const Tensor& mask) override;
  void dropout_backward(const Tensor& dy, const Tensor& mask, double scale, const Tensor& dx) override;
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
  void adam_update(const std::vector<AdamTensors>& group) override;
  void nag_update(const std::vector<NagTensors>& group) override;
  void moving_average(const std::vector<AverageTensors>& group, double decay) override;
  void add_sum_of_squares(const std::vector<Tensor>& xs, const Tensor& total) override;
  void scale_check_finite(const std::vector<Tensor>& xs, double scale, const Tensor& found_nonfinite) override;
  void label_smoothed_ce(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                         const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count,
                         const Tensor& grad_logits) override;
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
  void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_padding_mask,
                         bool causal, double scale, const Tensor& out, const Tensor& probabilities) override;

 private:
  struct PerDevice {
    void* stream = nullptr;  // cudaStream_t
    void* cublas = nullptr;  // cublasHandle_t, bound to the stream
  };
  // The device's stream and handle, with the device made current for the calling thread.
  const PerDevice& on(Device device);

  // copy() when src and dst lie on different devices (one is the host).
  void copy_between_host_and_device(const Tensor& src, const Tensor& dst);

  std::vector<PerDevice> devices_;
};

// Registers the CUDA backend and one caching allocator per device, once; returns false (and
// registers nothing) when CUDA cannot be used here (cuda::unavailable_reason() says why).
bool register_cuda_backend();

}  // namespace attn::cuda
