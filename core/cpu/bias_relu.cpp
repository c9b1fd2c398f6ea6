// CPU fused bias + ReLU, the first layer of the Transformer's feed-forward block
// (docs/models.md §1.4: FFN(x) = fc2(ReLU(x W1ᵀ + b1))), and its backward (core/backend.hpp).
//
// What is fused, and why: unfused, the bias was broadcast-copied into the output before the
// GEMM (one pass), ReLU read that and wrote a second [rows, F] tensor (two passes, and the
// pre-activation had to be kept for the backward), and the backward read the saved input
// and dy to write dz (three passes) and then summed dz over the rows for the bias gradient
// (one more). Here the forward is one in-place pass after the GEMM, and the backward takes
// the ReLU mask from the output (y > 0 exactly where z > 0) and accumulates the bias
// gradient while it writes dz: one read of y and dy, one write of dz.
//
// The bias gradient is summed in double over fixed blocks of rows (in parallel), then over
// the blocks in order: the same result at every thread count.
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

// Rows per block of the bias-gradient sum: blocks are the unit of parallel work (contiguous
// memory per thread), and their fixed size keeps the summation order — hence the result —
// independent of the thread count.
constexpr int64_t kRowBlock = 128;

// dz for rows [r0, r1), and (when partial is not null) their column sums in double.
template <typename T>
void relu_grad_rows(const T* y, const T* dy, T* dz, double* partial, int64_t r0, int64_t r1, int64_t cols) {
  if (partial != nullptr) std::fill(partial, partial + cols, 0.0);
  for (int64_t r = r0; r < r1; ++r) {
    const T* ys = y + r * cols;
    const T* gs = dy + r * cols;
    T* zs = dz + r * cols;
    for (int64_t c = 0; c < cols; ++c) zs[c] = ys[c] > T(0) ? gs[c] : T(0);
    if (partial != nullptr)
      for (int64_t c = 0; c < cols; ++c) partial[c] += double(zs[c]);
  }
}

template <typename T>
void bias_relu_backward_typed(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) {
  const int64_t cols = y.size(-1), rows = y.numel() / std::max<int64_t>(1, cols);
  const Tensor g = dy.contiguous();
  const T* yp = y.data<T>();
  const T* gp = g.data<T>();
  T* zp = dz.data<T>();
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  std::vector<double> partials(dbias.defined() ? size_t(blocks * cols) : 0);
  double* pp = partials.empty() ? nullptr : partials.data();
  parallel_ranges(blocks, [=](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b)
      relu_grad_rows(yp, gp, zp, pp != nullptr ? pp + b * cols : nullptr, b * kRowBlock,
                     std::min(rows, (b + 1) * kRowBlock), cols);
  }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, kRowBlock * cols)));
  if (pp == nullptr) return;
  T* db = dbias.data<T>();
  for (int64_t c = 0; c < cols; ++c) {
    double sum = 0.0;
    for (int64_t b = 0; b < blocks; ++b) sum += pp[b * cols + c];
    db[c] = T(sum);
  }
}

}  // namespace

void CpuBackend::bias_relu(const Tensor& y, const Tensor& bias) {
  dispatch_floating(y.dtype(), [&](auto tag) { bias_relu_typed<decltype(tag)>(y, bias); });
}

void CpuBackend::bias_relu_backward(const Tensor& y, const Tensor& dy, const Tensor& dz, const Tensor& dbias) {
  dispatch_floating(y.dtype(), [&](auto tag) { bias_relu_backward_typed<decltype(tag)>(y, dy, dz, dbias); });
}

}  // namespace attn::cpu
