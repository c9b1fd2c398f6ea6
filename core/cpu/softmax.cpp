// CPU softmax and log-softmax over the last dim of a contiguous tensor, and their backward
// (core/backend.hpp). Numerically stable form: with m = max_j x_j,
//   softmax(x)_i     = exp(x_i - m) / sum_j exp(x_j - m)
//   log_softmax(x)_i = x_i - m - log sum_j exp(x_j - m)
// Backward, with y the saved output and g = dL/dy:
//   softmax:     dx = y * (g - sum_j g_j y_j)
//   log_softmax: dx = g - exp(y) * sum_j g_j
// A row that is all -inf gives NaN, as in PyTorch.
#include <cmath>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/row_loop.hpp"

namespace attn::cpu {
namespace {

template <typename T>
void softmax_rows(const Tensor& x, const Tensor& out, bool log) {
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  const T* px = x.data<T>();
  T* py = out.data<T>();
  for_each_row(rows, cols, [&](int64_t r) {
    RowIn<T> xr(px + r * cols, cols);
    RowOut<T> yr(py + r * cols, cols);
    const T max = xr.maxCoeff();
    if (log) {
      yr = (xr - max) - std::log((xr - max).exp().sum());  // shifted first: exact for large logits
    } else {
      yr = (xr - max).exp();
      yr *= T(1) / yr.sum();
      flush_denormals(py + r * cols, cols);  // masked (−∞) entries exactly 0
    }
  });
}

template <typename T>
void softmax_backward_rows(const Tensor& y, const Tensor& dy, const Tensor& dx, bool log) {
  const int64_t cols = y.size(-1), rows = cols == 0 ? 0 : y.numel() / cols;
  const T* py = y.data<T>();
  const T* pg = dy.data<T>();
  T* pdx = dx.data<T>();
  for_each_row(rows, cols, [&](int64_t r) {
    RowIn<T> yr(py + r * cols, cols), gr(pg + r * cols, cols);
    RowOut<T> dxr(pdx + r * cols, cols);
    if (log) {  // dx = dy − softmax · Σdy, with softmax = exp(y) exactly 0 at masked (−∞) entries
      dxr = yr.exp();
      flush_denormals(pdx + r * cols, cols);
      dxr = gr - dxr * gr.sum();
    } else {
      dxr = yr * (gr - (gr * yr).sum());
    }
  });
}

}  // namespace

void CpuBackend::softmax(const Tensor& x, const Tensor& out, bool log) {
  dispatch_floating(x.dtype(), [&](auto tag) { softmax_rows<decltype(tag)>(x, out, log); });
}

void CpuBackend::softmax_backward(const Tensor& y, const Tensor& dy, const Tensor& dx, bool log) {
  dispatch_floating(y.dtype(), [&](auto tag) { softmax_backward_rows<decltype(tag)>(y, dy, dx, log); });
}

}  // namespace attn::cpu
