// The CUDA backend (cuda/cuda_backend.hpp): streams, cuBLAS and the launches of cuda/*.cu.
#include "cuda/cuda_backend.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <mutex>

#include "core/cross_entropy_target_error.hpp"
#include "core/matmul_precision.hpp"
#include "cuda/attention_shape.hpp"
#include "cuda/cuda_allocator.hpp"
#include "cuda/device_clock.hpp"
#include "cuda/device_info.hpp"
#include "cuda/kernel_launch.hpp"
#include "cuda/reduce_layout.hpp"
#include "cuda/scan_plan.hpp"
#include "cuda/strided_layout.hpp"

namespace attn::cuda {
namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  ATTN_CHECK(status == CUBLAS_STATUS_SUCCESS, "cuBLAS: {} failed: {}", what, cublasGetStatusString(status));
}

// Each tensor of `tensors` is a contiguous float32 tensor (undefined ones are allowed where
// the kernel allows them), or the kernel says what it needs.
void require_contiguous_float(const char* kernel, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (!t->defined()) continue;
    ATTN_CHECK(t->dtype() == DType::Float32 && t->is_contiguous(),
               "the cuda backend's {} takes contiguous float32 tensors so far; got {} {}{}", kernel,
               dtype_name(t->dtype()), t->shape().str(), t->is_contiguous() ? "" : " (strided)");
  }
}

// The int64 indices of index_select_rows / index_add_rows, contiguous.
void require_row_indices(const char* kernel, const Tensor& indices) {
  ATTN_CHECK(indices.dtype() == DType::Int64 && indices.is_contiguous(),
             "the cuda backend's {} takes contiguous int64 indices; got {} {}", kernel, dtype_name(indices.dtype()),
             indices.shape().str());
}

// A float32 tensor's data, or null for an undefined (optional) one.
float* float_data(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }

// Scratch for `outputs` chunked column sums of a [rows, cols] matrix (launch_layer_norm_backward),
// or an undefined tensor when they need none.
Tensor column_scratch(int64_t rows, int64_t cols, int64_t outputs, Device device) {
  const int64_t chunks = column_chunks(rows, cols);
  if (outputs == 0 || chunks == 1) return Tensor();
  return Tensor(Shape{outputs * chunks * cols}, DType::Float32, device);
}

// Scratch for launch_column_sums over a [rows, cols] matrix.
Tensor column_sum_scratch(int64_t rows, int64_t cols, Device device) {
  return Tensor(Shape{column_sum_chunks(rows, cols) * cols}, DType::Float64, device);
}

// The columns of x when `op` over x into out sums a contiguous x over its leading dims and
// keeps the rest (a bias's gradient: [N, out] → [out]); 0 otherwise.
int64_t leading_dims_sum_columns(ReduceOp op, const Tensor& x, const Tensor& out) {
  if (op != ReduceOp::Sum || !x.is_contiguous() || x.dim() == 0) return 0;
  int lead = 0;
  while (lead < x.dim() && out.size(lead) == 1) ++lead;
  int64_t cols = 1;
  for (int d = lead; d < x.dim(); ++d) {
    if (out.size(d) != x.size(d)) return 0;
    cols *= x.size(d);
  }
  return lead > 0 ? cols : 0;
}

// t itself when contiguous (or undefined), else a contiguous copy on its device: the launches
// of cuda/*.cu read contiguous inputs, while the kernel interface lets every input be a
// strided view (docs/design.md §2).
Tensor dense(const Tensor& t, void* stream) {
  if (!t.defined() || t.is_contiguous()) return t;
  const Tensor out(t.shape(), t.dtype(), t.device());
  launch_strided_copy(t.raw_data(), out.raw_data(), dtype_size(t.dtype()), strided_layout(t, out, out), out.numel(),
                      stream);
  return out;
}

int64_t last_dim(const Tensor& x) { return x.dim() == 0 ? 1 : x.size(-1); }
int64_t rows_of(const Tensor& x) { return x.numel() / std::max<int64_t>(1, last_dim(x)); }

// How one operand of a row-major product reaches cuBLAS (column-major): its matrices either
// have unit column stride (row-major, rows possibly spaced wider than they are long, like
// heads interleaved in [B, T, H, d]) or unit row stride (transposed views).
struct GemmOperand {
  cublasOperation_t op;
  int64_t ld;
};

GemmOperand gemm_operand(const Tensor& t, const char* name) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  if (t.stride(-1) == 1 || cols == 1) return {CUBLAS_OP_N, std::max(t.stride(-2), cols)};
  if (t.stride(-2) == 1 || rows == 1) return {CUBLAS_OP_T, std::max(t.stride(-1), rows)};
  throw Error(fmt::format(
      "the cuda backend's batched_gemm needs matrices with unit row or column stride; {} {} has strides {}", name,
      t.shape().str(), t.strides().str()));
}

// 4-D: two batch dims of independent strides (attention's heads left interleaved in a
// [B, T, H, d] projection), which no single stride spans: the B · H matrices' addresses are
// written on the device, then one pointer-array batched product runs them all (a loop of
// strided batches, one per head, cost 2.6× as much at a base model's sizes on an H200).
void batched_gemm_over_two_dims(const Tensor& a, const GemmOperand& ga, const Tensor& b, const GemmOperand& gb,
                                const Tensor& out, float alpha, float beta, cublasComputeType_t compute,
                                cublasHandle_t handle, void* stream) {
  const int64_t m = out.size(-2), n = out.size(-1), k = a.size(-1), ldc = std::max(out.stride(-2), n);
  const int64_t inner = out.size(1), count = out.size(0) * inner;
  if (count == 0) return;
  const auto operand = [](const Tensor& t) {
    return cuda_kernels::BatchOperand{t.data<float>(), (long long)t.stride(0), (long long)t.stride(1)};
  };
  const Tensor pointers(Shape{3, count}, DType::Int64, out.device());  // a, b, out
  const auto row = [&](int64_t r) { return reinterpret_cast<float**>(pointers.data<int64_t>() + r * count); };
  launch_gemm_pointers(operand(a), operand(b), operand(out), inner, count, const_cast<const float**>(row(0)),
                       const_cast<const float**>(row(1)), row(2), stream);
  check_cublas(cublasGemmBatchedEx(handle, gb.op, ga.op, int(n), int(m), int(k),
                                   &alpha, reinterpret_cast<const void* const*>(row(1)), CUDA_R_32F, int(gb.ld),
                                   reinterpret_cast<const void* const*>(row(0)), CUDA_R_32F, int(ga.ld), &beta,
                                   reinterpret_cast<void* const*>(row(2)), CUDA_R_32F, int(ldc), int(count),
                                   compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmBatchedEx");
}

// The sizes of a banded convolution of u [B, T, C] with taps w [H, K] or [B, T, H, K].
cuda_kernels::BandShape band_shape(const Tensor& u, const Tensor& w, int64_t padding_left) {
  const int64_t heads = w.size(-2), kernel = w.size(-1);
  ATTN_CHECK(u.size(1) <= INT_MAX && u.size(2) <= INT_MAX && heads * kernel <= 65535,
             "the cuda backend's banded_conv takes at most {} positions and channels and 65535 taps; got input {} "
             "and taps {}",
             INT_MAX, u.shape().str(), w.shape().str());
  return {u.size(0) * u.size(1), int(u.size(1)), int(u.size(2)),         int(heads),
          int(kernel),           int(u.size(2) / heads), int(padding_left), w.dim() == 2};
}

// Fills groups of up to kGroupTensors tensors from `items` (fill(group, slot, item) sets the
// slot's pointers and returns its element count) and hands each full group, and the last,
// to `launch`: a whole model's update in a few launches.
template <typename Group, typename Item, typename Fill, typename Launch>
void for_each_group(const std::vector<Item>& items, Fill fill, Launch launch) {
  Group group{};
  for (const Item& item : items) {
    group.blocks.add(fill(group, group.blocks.count, item));
    if (group.blocks.full()) {
      launch(group);
      group = Group{};
    }
  }
  if (group.blocks.count > 0) launch(group);
}

int64_t float_slot(cuda_kernels::FloatGroup& group, int slot, const Tensor& x) {
  group.x[slot] = x.data<float>();
  return x.numel();
}

}  // namespace

CudaBackend::CudaBackend(int device_count) : devices_(size_t(device_count)) {
  for (int i = 0; i < device_count; ++i) {
    check_cuda(int(cudaSetDevice(i)), "cudaSetDevice");
    cudaStream_t stream = nullptr;
    check_cuda(int(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)), "cudaStreamCreate");
    cublasHandle_t handle = nullptr;
    check_cublas(cublasCreate(&handle), "cublasCreate");
    check_cublas(cublasSetStream(handle, stream), "cublasSetStream");
    devices_[size_t(i)] = {stream, handle};
  }
}

CudaBackend::~CudaBackend() {
  for (const PerDevice& d : devices_) {
    cublasDestroy(static_cast<cublasHandle_t>(d.cublas));
    cudaStreamDestroy(static_cast<cudaStream_t>(d.stream));
  }
}

const CudaBackend::PerDevice& CudaBackend::on(Device device) {
  ATTN_CHECK(device.is_cuda() && device.index >= 0 && size_t(device.index) < devices_.size(),
             "the cuda backend has no device {} ({} CUDA device(s) here)", device.str(), devices_.size());
  check_cuda(int(cudaSetDevice(device.index)), "cudaSetDevice");
  return devices_[size_t(device.index)];
}

Stream CudaBackend::stream(Device device) { return Stream{device, on(device).stream}; }

void CudaBackend::synchronize() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    check_cuda(int(cudaSetDevice(int(i))), "cudaSetDevice");
    check_cuda(int(cudaStreamSynchronize(static_cast<cudaStream_t>(devices_[i].stream))), "cudaStreamSynchronize");
  }
}

void CudaBackend::fill(const Tensor& out, double value) {
  if (!out.is_contiguous()) {  // a strided view: filled through a contiguous tensor
    const Tensor filled(out.shape(), out.dtype(), out.device());
    fill(filled, value);
    return copy(filled, out);
  }
  const Tensor element = full(Shape{}, value, out.dtype());  // value in out's dtype, on the host
  launch_fill(element.raw_data(), dtype_size(out.dtype()), out.raw_data(), out.numel(), on(out.device()).stream);
}

void CudaBackend::copy(const Tensor& src, const Tensor& dst) {
  if (src.device() != dst.device()) return copy_between_host_and_device(src, dst);
  void* stream = on(dst.device()).stream;
  if (src.dtype() != dst.dtype())
    launch_convert_copy(src.raw_data(), src.dtype(), dst.raw_data(), dst.dtype(), strided_layout(src, dst, dst),
                        dst.numel(), stream);
  else if (!src.is_contiguous() || !dst.is_contiguous())
    launch_strided_copy(src.raw_data(), dst.raw_data(), dtype_size(src.dtype()), strided_layout(src, dst, dst),
                        dst.numel(), stream);
  else
    check_cuda(int(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), dst.nbytes(), cudaMemcpyDefault,
                                   static_cast<cudaStream_t>(stream))),
               "cudaMemcpyAsync");
}

// cudaMemcpy moves contiguous bytes: strides and dtype conversions are dealt with on the
// device side (src staged into a contiguous tensor of dst's dtype, or the bytes landing in
// one of src's that is then copied into dst) and on the host by the CPU backend.
void CudaBackend::copy_between_host_and_device(const Tensor& src, const Tensor& dst) {
  const auto stream = static_cast<cudaStream_t>(on(src.device().is_cuda() ? src.device() : dst.device()).stream);
  const auto copy_bytes = [&](const Tensor& from, const Tensor& to) {
    check_cuda(int(cudaMemcpyAsync(to.raw_data(), from.raw_data(), to.nbytes(), cudaMemcpyDefault, stream)),
               "cudaMemcpyAsync");
  };
  if (src.device().is_cuda()) {  // device → host
    Tensor staged = src;
    if (!src.is_contiguous() || src.dtype() != dst.dtype()) {
      staged = Tensor(src.shape(), dst.dtype(), src.device());
      copy(src, staged);
    }
    const Tensor landing = dst.is_contiguous() ? dst : Tensor(dst.shape(), dst.dtype(), dst.device());
    copy_bytes(staged, landing);
    // The host may read its copy at once.
    check_cuda(int(cudaStreamSynchronize(stream)), "cudaStreamSynchronize");
    if (!landing.shares_storage(dst)) backend_for(dst.device()).copy(landing, dst);
    return;
  }
  // host → device: pageable host memory is staged by CUDA before cudaMemcpyAsync returns, so
  // a temporary host source may go at once.
  const Tensor source = src.contiguous();
  if (dst.is_contiguous() && src.dtype() == dst.dtype()) return copy_bytes(source, dst);
  const Tensor landing(src.shape(), src.dtype(), dst.device());
  copy_bytes(source, landing);
  copy(landing, dst);
}

void CudaBackend::unary(UnaryOp op, const Tensor& x_view, const Tensor& out, UnaryParams p) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  if (x.dtype() == DType::Int32 || x.dtype() == DType::Int64)
    return launch_integer_unary(op, p, x.dtype(), x.raw_data(), out.raw_data(), x.numel(), stream);
  require_contiguous_float("unary", {&x, &out});
  launch_unary(op, p, x.data<float>(), out.data<float>(), x.numel(), stream);
}

void CudaBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const bool supported = a.dtype() == DType::Float32 || a.dtype() == DType::Int32 || a.dtype() == DType::Int64 ||
                         a.dtype() == DType::Bool;
  ATTN_CHECK(supported && out.is_contiguous(),
             "the cuda backend's binary takes float32, int32, int64 and bool operands so far; got {}",
             dtype_name(a.dtype()));
  launch_binary(op, a.dtype(), a.raw_data(), b.raw_data(), out.raw_data(), strided_layout(a, b, out), out.numel(),
                on(out.device()).stream);
}

void CudaBackend::where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  ATTN_CHECK(a.dtype() == DType::Float32 && cond.dtype() == DType::Bool && out.is_contiguous(),
             "the cuda backend's where takes float32 values and a bool condition so far; got {}",
             dtype_name(a.dtype()));
  launch_where(cond.data<bool>(), a.data<float>(), b.data<float>(), out.data<float>(), strided_layout(a, b, out, cond),
               out.numel(), on(out.device()).stream);
}

void CudaBackend::unary_backward(UnaryOp op, const Tensor& x_view, const Tensor& y_view, const Tensor& dy_view, const Tensor& dx,
                                 UnaryParams p) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  const Tensor y = dense(y_view, stream);
  const Tensor dy = dense(dy_view, stream);
  require_contiguous_float("unary_backward", {&x, &y, &dy, &dx});
  launch_unary_backward(op, p, x.data<float>(), float_data(y), dy.data<float>(), dx.data<float>(), x.numel(),
                        stream);
}

void CudaBackend::bias_relu(const Tensor& y, const Tensor& bias_view) {
  void* stream = on(y.device()).stream;
  const Tensor bias = dense(bias_view, stream);
  require_contiguous_float("bias_relu", {&y, &bias});
  launch_bias_relu(y.data<float>(), float_data(bias), rows_of(y), last_dim(y), stream);
}

void CudaBackend::bias_relu_backward(const Tensor& y_view, const Tensor& dy_view, const Tensor& dz, const Tensor& dbias) {
  void* stream = on(y_view.device()).stream;
  const Tensor y = dense(y_view, stream);
  const Tensor dy = dense(dy_view, stream);
  require_contiguous_float("bias_relu_backward", {&y, &dy, &dz, &dbias});
  const Tensor partial = dbias.defined() ? column_sum_scratch(rows_of(y), last_dim(y), y.device()) : Tensor();
  launch_bias_relu_backward(y.data<float>(), dy.data<float>(), dz.data<float>(), float_data(dbias),
                            partial.defined() ? partial.data<double>() : nullptr, rows_of(y), last_dim(y), stream);
}

void CudaBackend::index_select_rows(const Tensor& weight_view, const Tensor& indices_view, const Tensor& out) {
  void* stream = on(weight_view.device()).stream;
  const Tensor weight = dense(weight_view, stream);
  const Tensor indices = dense(indices_view, stream);
  require_row_indices("index_select_rows", indices);
  launch_index_select_rows(weight.raw_data(), weight.size(0), indices.data<int64_t>(), out.raw_data(),
                           dtype_size(weight.dtype()), indices.numel(), weight.size(1), stream);
}

void CudaBackend::index_add_rows(const Tensor& grad_weight, const Tensor& indices_view, const Tensor& src_view) {
  void* stream = on(indices_view.device()).stream;
  const Tensor indices = dense(indices_view, stream);
  const Tensor src = dense(src_view, stream);
  require_contiguous_float("index_add_rows", {&grad_weight, &src});
  require_row_indices("index_add_rows", indices);
  const Tensor links(Shape{2 * indices.numel()}, DType::Int64, indices.device());  // next row, first row
  launch_index_add_rows(grad_weight.data<float>(), grad_weight.size(0), indices.data<int64_t>(), src.data<float>(),
                        indices.numel(), grad_weight.size(1), reinterpret_cast<long long*>(links.data<int64_t>()),
                        stream);
}

void CudaBackend::uniform(const Tensor& out, double low, double high, uint64_t seed, uint64_t first) {
  require_contiguous_float("uniform", {&out});
  launch_uniform(out.data<float>(), low, high, seed, first, out.numel(), on(out.device()).stream);
}

void CudaBackend::normal(const Tensor& out, double mean, double stddev, uint64_t seed, uint64_t first) {
  require_contiguous_float("normal", {&out});
  launch_normal(out.data<float>(), mean, stddev, seed, first, out.numel(), on(out.device()).stream);
}

void CudaBackend::topk(const Tensor& x_view, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  require_contiguous_float("topk", {&x, &values});
  launch_topk(x.data<float>(), k, largest, values.data<float>(), indices.data<int64_t>(), rows_of(x), last_dim(x),
              stream);
}

void CudaBackend::gather_last(const Tensor& x_view, const Tensor& index_view, const Tensor& out) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  const Tensor index = dense(index_view, stream);
  require_contiguous_float("gather_last", {&x, &out});
  require_row_indices("gather_last", index);
  launch_gather_last(x.data<float>(), index.data<int64_t>(), out.data<float>(), rows_of(x), last_dim(x),
                     stream);
}

void CudaBackend::dropout(const Tensor& x, double p, uint64_t seed, uint64_t first, const Tensor& out,
                          const Tensor& mask) {
  dropout_add(x, Tensor(), p, seed, first, out, mask);
}

void CudaBackend::dropout_add(const Tensor& x_view, const Tensor& residual_view, double p, uint64_t seed, uint64_t first,
                              const Tensor& out, const Tensor& mask) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  const Tensor residual = dense(residual_view, stream);
  require_contiguous_float("dropout", {&x, &residual, &out});
  launch_dropout(x.data<float>(), float_data(residual), p, seed, first, out.data<float>(), mask.data<bool>(),
                 x.numel(), stream);
}

void CudaBackend::dropout_backward(const Tensor& dy_view, const Tensor& mask_view, double scale, const Tensor& dx) {
  void* stream = on(dy_view.device()).stream;
  const Tensor dy = dense(dy_view, stream);
  const Tensor mask = dense(mask_view, stream);
  require_contiguous_float("dropout_backward", {&dy, &dx});
  launch_dropout_backward(dy.data<float>(), mask.data<bool>(), scale, dx.data<float>(), dx.numel(),
                          stream);
}

void CudaBackend::reduce(ReduceOp op, const Tensor& x, const Tensor& out) {
  ATTN_CHECK(x.dtype() == DType::Float32 && out.dtype() == DType::Float32 && out.is_contiguous(),
             "the cuda backend's reduce takes float32 tensors so far; got {}", dtype_name(x.dtype()));
  void* stream = on(x.device()).stream;
  bool last_dim_sum = op == ReduceOp::Sum && x.is_contiguous() && x.dim() > 0 && out.size(-1) == 1;
  for (int d = 0; d + 1 < x.dim(); ++d) last_dim_sum = last_dim_sum && out.size(d) == x.size(d);
  if (last_dim_sum) {  // one block per row: the reduction of every softmax-like row
    launch_row_sum(x.data<float>(), out.data<float>(), rows_of(x), last_dim(x), stream);
    return;
  }
  if (const int64_t cols = leading_dims_sum_columns(op, x, out); cols > 0) {  // column sums
    const int64_t rows = x.numel() / cols;
    launch_column_sums(x.data<float>(), out.data<float>(), column_sum_scratch(rows, cols, x.device()).data<double>(),
                       rows, cols, stream);
    return;
  }
  const cuda_kernels::ReduceLayout layout = reduce_layout(x, out);
  const int64_t chunks = reduce_chunks(op, layout, out.numel());
  const Tensor partial = chunks > 1 ? Tensor(Shape{chunks * out.numel()}, DType::Float64, x.device()) : Tensor();
  launch_reduce(op, x.data<float>(), out.data<float>(), layout, out.numel(),
                partial.defined() ? partial.data<double>() : nullptr, stream);
}

void CudaBackend::arg_reduce(bool is_max, const Tensor& x, int dim, const Tensor& values, const Tensor& indices) {
  ATTN_CHECK(x.dtype() == DType::Float32, "the cuda backend's arg_reduce takes float32 so far; got {}",
             dtype_name(x.dtype()));
  // values is x in keepdim form along dim, so dim is the one reduced dim (none when its
  // extent is 1: then reduced_count is 1 and every index is 0).
  const cuda_kernels::ReduceLayout layout = reduce_layout(x, values);
  launch_arg_reduce(is_max, x.data<float>(), values.data<float>(), indices.data<int64_t>(), layout, values.numel(),
                    on(x.device()).stream);
}

void CudaBackend::cumsum(const Tensor& x_view, int dim, bool reverse, const Tensor& out) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  ATTN_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Int64,
             "the cuda backend's cumsum takes float32 or int64 tensors so far; got {} {}", dtype_name(x.dtype()),
             x.shape().str());
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= x.size(d);
  for (int d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  launch_cumsum(x.raw_data(), out.raw_data(), x.dtype() == DType::Float32, outer, x.size(dim), inner, reverse,
                stream);
}

void CudaBackend::batched_gemm(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  ATTN_CHECK(a.dtype() == DType::Float32 && b.dtype() == DType::Float32 && out.dtype() == DType::Float32 &&
                 (out.size(-1) == 1 || out.stride(-1) == 1),
             "the cuda backend's batched_gemm takes float32 operands and an output with unit column stride; got {} {}",
             dtype_name(a.dtype()), a.shape().str());
  const int64_t m = out.size(-2), n = out.size(-1), k = a.size(-1);
  const GemmOperand ga = gemm_operand(a, "a"), gb = gemm_operand(b, "b");
  const int64_t ldc = std::max(out.stride(-2), n);
  const float alpha_f = float(alpha), beta_f = float(beta);
  // bf16 matmul precision: float32 storage, bf16 products with float32 accumulation.
  const cublasComputeType_t compute =
      matmul_precision() == MatmulPrecision::BFloat16 ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F;
  const PerDevice& device = on(out.device());
  const auto handle = static_cast<cublasHandle_t>(device.cublas);
  if (out.dim() == 4)
    return batched_gemm_over_two_dims(a, ga, b, gb, out, alpha_f, beta_f, compute, handle, device.stream);
  // Row-major out = a·b is column-major outᵀ = bᵀ·aᵀ: b comes first. A single matrix (every
  // linear layer: rows flattened) goes to cublasGemmEx, whose kernel choice is made for one
  // product rather than for a batch; 3-D is one strided batch over dim 0.
  const int64_t batch = out.dim() == 3 ? out.size(0) : 1;
  if (batch == 1)
    check_cublas(cublasGemmEx(handle, gb.op, ga.op, int(n), int(m), int(k), &alpha_f, b.data<float>(), CUDA_R_32F,
                              int(gb.ld), a.data<float>(), CUDA_R_32F, int(ga.ld), &beta_f, out.data<float>(),
                              CUDA_R_32F, int(ldc), compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  else
    check_cublas(cublasGemmStridedBatchedEx(handle, gb.op, ga.op, int(n), int(m), int(k), &alpha_f, b.data<float>(),
                                            CUDA_R_32F, int(gb.ld), b.stride(0), a.data<float>(), CUDA_R_32F,
                                            int(ga.ld), a.stride(0), &beta_f, out.data<float>(), CUDA_R_32F, int(ldc),
                                            out.stride(0), int(batch), compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx");
}

void CudaBackend::softmax(const Tensor& x_view, const Tensor& out, bool log) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  require_contiguous_float("softmax", {&x, &out});
  launch_softmax(x.data<float>(), out.data<float>(), rows_of(x), last_dim(x), log, stream);
}

void CudaBackend::layer_norm(const Tensor& x_view, const Tensor& gamma_view, const Tensor& beta_view, double eps, const Tensor& out,
                             const Tensor& mean, const Tensor& rstd) {
  void* stream = on(x_view.device()).stream;
  const Tensor x = dense(x_view, stream);
  const Tensor gamma = dense(gamma_view, stream);
  const Tensor beta = dense(beta_view, stream);
  require_contiguous_float("layer_norm", {&x, &gamma, &beta, &out, &mean, &rstd});
  launch_layer_norm(x.data<float>(), float_data(gamma), float_data(beta), float(eps), out.data<float>(),
                    mean.data<float>(), rstd.data<float>(), rows_of(x), last_dim(x), stream);
}

void CudaBackend::softmax_backward(const Tensor& y_view, const Tensor& dy_view, const Tensor& dx, bool log) {
  void* stream = on(y_view.device()).stream;
  const Tensor y = dense(y_view, stream);
  const Tensor dy = dense(dy_view, stream);
  require_contiguous_float("softmax_backward", {&y, &dy, &dx});
  launch_softmax_backward(y.data<float>(), dy.data<float>(), dx.data<float>(), rows_of(y), last_dim(y), log,
                          stream);
}

void CudaBackend::layer_norm_backward(const Tensor& dy_view, const Tensor& x_view, const Tensor& gamma_view, const Tensor& mean_view,
                                      const Tensor& rstd_view, const Tensor& dx, const Tensor& dgamma,
                                      const Tensor& dbeta) {
  void* stream = on(dy_view.device()).stream;
  const Tensor dy = dense(dy_view, stream);
  const Tensor x = dense(x_view, stream);
  const Tensor gamma = dense(gamma_view, stream);
  const Tensor mean = dense(mean_view, stream);
  const Tensor rstd = dense(rstd_view, stream);
  require_contiguous_float("layer_norm_backward", {&dy, &x, &gamma, &mean, &rstd, &dx, &dgamma, &dbeta});
  const Tensor partial = column_scratch(rows_of(x), last_dim(x), dgamma.defined() || dbeta.defined() ? 2 : 0, x.device());
  launch_layer_norm_backward(dy.data<float>(), x.data<float>(), float_data(gamma), mean.data<float>(),
                             rstd.data<float>(), dx.data<float>(), float_data(dgamma), float_data(dbeta),
                             float_data(partial), rows_of(x), last_dim(x), stream);
}

void CudaBackend::label_smoothed_ce(const Tensor& logits_view, const Tensor& targets_view, double epsilon,
                                    int64_t ignore_index, const Tensor& lse, const Tensor& loss, const Tensor& nll,
                                    const Tensor& count, const Tensor& grad_logits) {
  void* stream = on(logits_view.device()).stream;
  const Tensor logits = dense(logits_view, stream);
  const Tensor targets = dense(targets_view, stream);
  require_contiguous_float("label_smoothed_ce", {&logits, &lse});
  const int64_t rows = logits.size(0), classes = logits.size(1);
  const Device device = logits.device();
  const Tensor row_loss(Shape{rows}, DType::Float64, device), row_nll(Shape{rows}, DType::Float64, device);
  const Tensor first_bad_row(Shape{}, DType::Int64, device);
  launch_label_smoothed_ce(logits.data<float>(), targets.data<int64_t>(), epsilon, ignore_index, lse.data<float>(),
                           row_loss.data<double>(), row_nll.data<double>(), loss.data<double>(), nll.data<double>(),
                           count.data<double>(), first_bad_row.data<int64_t>(), rows, classes, stream);
  const auto bad = int64_t(first_bad_row.item());  // the one read back: errors must name the target
  if (bad >= 0) throw cross_entropy_target_error(int64_t(targets.narrow(0, bad, 1).item()), bad, classes, ignore_index);
  if (!grad_logits.defined()) return;
  // On the GPU the gradient is a second, element-parallel kernel over the saved lse.
  require_contiguous_float("label_smoothed_ce", {&grad_logits});
  launch_label_smoothed_ce_backward(logits.data<float>(), targets.data<int64_t>(), lse.data<float>(), epsilon,
                                    ignore_index, 1.0, grad_logits.data<float>(), rows, classes, stream);
}

void CudaBackend::adam_update(const std::vector<AdamTensors>& group) {
  void* stream = on(group.front().param.device()).stream;
  for_each_group<cuda_kernels::AdamGroup>(group, [](cuda_kernels::AdamGroup& g, int slot, const AdamTensors& t) {
    g.param[slot] = t.param.data<float>();
    g.grad[slot] = t.grad.data<float>();
    g.exp_avg[slot] = t.exp_avg.data<float>();
    g.exp_avg_sq[slot] = t.exp_avg_sq.data<float>();
    g.update[slot] = t.update;
    return t.param.numel();
  }, [stream](const cuda_kernels::AdamGroup& g) { launch_adam_update(g, stream); });
}

void CudaBackend::nag_update(const std::vector<NagTensors>& group) {
  void* stream = on(group.front().param.device()).stream;
  for_each_group<cuda_kernels::NagGroup>(group, [](cuda_kernels::NagGroup& g, int slot, const NagTensors& t) {
    g.param[slot] = t.param.data<float>();
    g.grad[slot] = t.grad.data<float>();
    g.buffer[slot] = t.buffer.data<float>();
    g.update[slot] = t.update;
    return t.param.numel();
  }, [stream](const cuda_kernels::NagGroup& g) { launch_nag_update(g, stream); });
}

void CudaBackend::moving_average(const std::vector<AverageTensors>& group, double decay) {
  void* stream = on(group.front().average.device()).stream;
  for_each_group<cuda_kernels::AverageGroup>(group, [](cuda_kernels::AverageGroup& g, int slot, const AverageTensors& t) {
    g.average[slot] = t.average.data<float>();
    g.value[slot] = t.value.data<float>();
    return t.average.numel();
  }, [&](const cuda_kernels::AverageGroup& g) { launch_moving_average(g, decay, stream); });
}

// Every block's sum into one scratch array (the groups' blocks one after another), then the
// array added up in a fixed order: one figure for the same tensors, run after run.
void CudaBackend::add_sum_of_squares(const std::vector<Tensor>& xs, const Tensor& total) {
  void* stream = on(total.device()).stream;
  int64_t blocks = 0;
  for (const Tensor& x : xs) blocks += cuda_kernels::GroupBlocks::blocks_of(x.numel());
  if (blocks == 0) return;
  const Tensor partial(Shape{blocks}, DType::Float64, total.device());
  double* next = partial.data<double>();
  for_each_group<cuda_kernels::FloatGroup>(xs, float_slot, [&](const cuda_kernels::FloatGroup& g) {
    launch_sum_of_squares_partials(g, next, stream);
    next += g.blocks.blocks();
  });
  launch_add_partials(partial.data<double>(), blocks, total.data<double>(), stream);
}

void CudaBackend::scale_check_finite(const std::vector<Tensor>& xs, double scale, const Tensor& found_nonfinite) {
  void* stream = on(xs.front().device()).stream;
  float* const flag = found_nonfinite.defined() ? found_nonfinite.data<float>() : nullptr;
  for_each_group<cuda_kernels::FloatGroup>(
      xs, float_slot, [&](const cuda_kernels::FloatGroup& g) { launch_scale_check_finite(g, scale, flag, stream); });
}

void CudaBackend::banded_conv(const Tensor& u, const Tensor& w, int64_t padding_left, const Tensor& out) {
  require_contiguous_float("banded_conv", {&u, &w, &out});
  launch_banded_conv(u.data<float>(), w.data<float>(), out.data<float>(), band_shape(u, w, padding_left),
                     on(u.device()).stream);
}

void CudaBackend::banded_conv_backward(const Tensor& u, const Tensor& w, const Tensor& dout, int64_t padding_left,
                                       const Tensor& du, const Tensor& dw) {
  require_contiguous_float("banded_conv_backward", {&u, &w, &dout, &du, &dw});
  const cuda_kernels::BandShape shape = band_shape(u, w, padding_left);
  // The shared taps' partial sums per chunk of rows.
  const Tensor partial =
      shape.shared ? Tensor(Shape{banded_conv_tap_chunks(shape) * w.numel()}, DType::Float64, u.device()) : Tensor();
  launch_banded_conv_backward(u.data<float>(), w.data<float>(), dout.data<float>(), du.data<float>(),
                              dw.data<float>(), partial.defined() ? partial.data<double>() : nullptr, shape,
                              on(u.device()).stream);
}

void CudaBackend::gated_linear_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                         const Tensor& b, const Tensor& state, const Tensor& y) {
  require_contiguous_float("gated_linear_attention", {&q, &k, &v, &a, &b, &state, &y});
  launch_gated_linear_attention(q.data<float>(), k.data<float>(), v.data<float>(), float_data(a), float_data(b),
                                state.data<float>(), y.data<float>(),
                                plan_scan("gated_linear_attention", q.size(0), q.size(1), q.size(2), v.size(2)),
                                on(q.device()).stream);
}

void CudaBackend::gated_linear_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& a,
                                                  const Tensor& b, const Tensor& dy, const Tensor& dq,
                                                  const Tensor& dk, const Tensor& dv, const Tensor& da,
                                                  const Tensor& db) {
  require_contiguous_float("gated_linear_attention_backward", {&q, &k, &v, &a, &b, &dy, &dq, &dk, &dv, &da, &db});
  const cuda_kernels::ScanShape shape =
      plan_scan("gated_linear_attention_backward", q.size(0), q.size(1), q.size(2), v.size(2));
  const Tensor scratch(Shape{scan_scratch_floats(shape)}, DType::Float32, q.device());
  launch_gated_linear_attention_backward(q.data<float>(), k.data<float>(), v.data<float>(), float_data(a),
                                         float_data(b), dy.data<float>(), dq.data<float>(), dk.data<float>(),
                                         dv.data<float>(), da.defined() ? da.data<float>() : nullptr,
                                         db.defined() ? db.data<float>() : nullptr, scratch.data<float>(), shape,
                                         on(q.device()).stream);
}

void CudaBackend::delta_rule(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                             const Tensor& state, const Tensor& y) {
  require_contiguous_float("delta_rule", {&q, &k, &v, &beta, &state, &y});
  launch_delta_rule(q.data<float>(), k.data<float>(), v.data<float>(), beta.data<float>(), state.data<float>(),
                    y.data<float>(), plan_scan("delta_rule", q.size(0), q.size(1), q.size(2), v.size(2)),
                    on(q.device()).stream);
}

void CudaBackend::delta_rule_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& beta,
                                      const Tensor& dy, const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                      const Tensor& dbeta) {
  require_contiguous_float("delta_rule_backward", {&q, &k, &v, &beta, &dy, &dq, &dk, &dv, &dbeta});
  const cuda_kernels::ScanShape shape = plan_scan("delta_rule_backward", q.size(0), q.size(1), q.size(2), v.size(2));
  const Tensor scratch(Shape{scan_scratch_floats(shape)}, DType::Float32, q.device());
  launch_delta_rule_backward(q.data<float>(), k.data<float>(), v.data<float>(), beta.data<float>(), dy.data<float>(),
                             dq.data<float>(), dk.data<float>(), dv.data<float>(), dbeta.data<float>(),
                             scratch.data<float>(), shape, on(q.device()).stream);
}

void CudaBackend::attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& key_padding_mask, bool causal, double scale, const Tensor& out,
                                    const Tensor& probabilities) {
  for (const Tensor* t : {&q, &k, &v, &out})
    ATTN_CHECK(t->dtype() == DType::Float32, "the cuda backend's attention_forward takes float32 tensors; got {} {}",
               dtype_name(t->dtype()), t->shape().str());
  require_contiguous_float("attention_forward", {&probabilities});
  void* stream = on(q.device()).stream;
  const Tensor padding = dense(key_padding_mask, stream);
  launch_attention_forward(q.data<float>(), k.data<float>(), v.data<float>(),
                           padding.defined() ? padding.data<bool>() : nullptr, out.data<float>(),
                           probabilities.data<float>(), attention_shape(q, k, v, out, scale, causal), stream);
}

bool register_cuda_backend() {
  static std::once_flag once;
  static bool usable = false;
  std::call_once(once, [] {
    if (!unavailable_reason().empty()) return;
    const int count = device_count();
    static CudaBackend* backend = new CudaBackend(count);  // never destroyed, like the CPU backend
    register_backend(DeviceType::CUDA, backend);
    profiler::register_device_clock(DeviceType::CUDA, &device_clock(*backend));
    for (int i = 0; i < count; ++i) register_allocator(Device::cuda(i), new CudaAllocator(i));
    usable = true;
  });
  return usable;
}

}  // namespace attn::cuda
