// CPU fused bias + ReLU, the first layer of the Transformer's feed-forward block
// (SPEC-MODELS.md §1.4: FFN(x) = fc2(ReLU(x W1ᵀ + b1))), and its backward (core/backend.hpp).
//
// What is fused, and why: unfused, the bias was broadcast-copied into the output before the
// GEMM (one pass), ReLU read that and wrote a second [rows, F] tensor (two passes, and the
// pre-activation had to be kept for the backward), and the backward read the saved input
// and dy to write dz (three passes) and then summed dz over the rows for the bias gradient
// (one more). Here the forward is one in-place pass after the GEMM, and the backward takes
// the ReLU mask from the output (y > 0 exactly where z > 0) and accumulates the bias
// gradient while it writes dz: one read of y and dy, one write of dz.
//
// The bias gradient is summed in double, row by row in order, for each column: the same
// result at every thread count (threads own disjoint column ranges).
#include <algorithm>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/row_loop.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {

namespace {

template <typename T>
void bias_relu_typed(const Tensor& y, const Tensor& bias) {
  const int64_t cols = y.size(-1), rows = y.numel() / std::max<int64_t>(1, cols);
  T* yp = y.data<T>();
  if (!bias.defined()) {
    for_each_row(rows, cols, [&](int64_t r) {
      T* row = yp + r * cols;
      for (int64_t c = 0; c < cols; ++c) row[c] = row[c] > T(0) ? row[c] : T(0);
    });
    return;
  }
  const Tensor b = bias.contiguous();
  const T* bp = b.data<T>();
  for_each_row(rows, cols, [&](int64_t r) {
    T* row = yp + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const T v = row[c] + bp[c];
      row[c] = v > T(0) ? v : T(0);
    }
  });
}

// dz over columns [lo, hi) of every row, and (when db is not null) those columns' sums.
template <typename T>
void relu_grad_columns(const T* y, const T* dy, T* dz, T* db, int64_t rows, int64_t cols, int64_t lo, int64_t hi) {
  std::vector<double> acc(size_t(db != nullptr ? hi - lo : 0), 0.0);
  double* a = acc.data();
  for (int64_t r = 0; r < rows; ++r) {
    const T* ys = y + r * cols + lo;
    const T* gs = dy + r * cols + lo;
    T* zs = dz + r * cols + lo;
    for (int64_t c = 0; c < hi - lo; ++c) zs[c] = ys[c] > T(0) ? gs[c] : T(0);
    if (db != nullptr)
      for (int64_t c = 0; c < hi - lo; ++c) a[c] += double(zs[c]);
  }
  if (db != nullptr)
    for (int64_t c = 0; c < hi - lo; ++c) db[lo + c] = T(a[c]);
}

template <typename T>
void bias_relu_backward_typed(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) {
  const int64_t cols = y.size(-1), rows = y.numel() / std::max<int64_t>(1, cols);
  const Tensor g = dy.contiguous();
  const T* yp = y.data<T>();
  const T* gp = g.data<T>();
  T* zp = dz.data<T>();
  T* bp = dbias.defined() ? dbias.data<T>() : nullptr;
  parallel_ranges(cols, [&](int64_t lo, int64_t hi) { relu_grad_columns(yp, gp, zp, bp, rows, cols, lo, hi); },
                  std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, rows)));
}

}  // namespace

void CpuBackend::bias_relu(const Tensor& y, const Tensor& bias) {
  dispatch_floating(y.dtype(), [&](auto tag) { bias_relu_typed<decltype(tag)>(y, bias); });
}

void CpuBackend::bias_relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) {
  dispatch_floating(y.dtype(), [&](auto tag) { bias_relu_backward_typed<decltype(tag)>(y, dy, dz, dbias); });
}

}  // namespace attn::cpu
