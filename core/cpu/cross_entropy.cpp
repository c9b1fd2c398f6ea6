// CPU fused label-smoothed cross entropy over logits [N, V] (docs/models.md §1.6, legacy
// eps/V form), without materialising log-probabilities or a one-hot matrix. Per row with
// gold y and lse = log sum_v exp(x_v) (computed stably around the row max):
//   nll    = -log p_y             = lse - x_y
//   smooth = -sum_{v=1..V} log p_v = V * lse - sum_v x_v     (the sum includes y)
//   loss   = (1 - eps) * nll + (eps / V) * smooth
// i.e. cross entropy against q = (1 - eps) onehot(y) + eps/V. Rows whose target is
// ignore_index contribute nothing and are not counted. Backward:
//   dloss/dx_v = p_v - eps/V - (1 - eps) [v == y]      (0 on ignored rows)
// Row losses are summed serially in row order, so the totals do not depend on the thread count.
#include <cmath>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cross_entropy_target_error.hpp"
#include "core/cpu/row_loop.hpp"

namespace attn::cpu {
namespace {

void check_targets(const int64_t* targets, int64_t rows, int64_t classes, int64_t ignore_index) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = targets[r];
    if (t != ignore_index && (t < 0 || t >= classes)) throw cross_entropy_target_error(t, r, classes, ignore_index);
  }
}

template <typename T>
double log_sum_exp(const RowIn<T>& xr) {
  const T max = xr.maxCoeff();
  return double(max) + std::log(double((xr - max).exp().sum()));
}

template <typename T>
void label_smoothed_ce_rows(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                            const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count) {
  const int64_t rows = logits.size(0), classes = logits.size(1);
  const T* px = logits.data<T>();
  const int64_t* pt = targets.data<int64_t>();
  T* plse = lse.data<T>();
  check_targets(pt, rows, classes, ignore_index);
  std::vector<double> row_loss(rows, 0.0), row_nll(rows, 0.0);
  for_each_row(rows, classes, [&](int64_t r) {
    RowIn<T> xr(px + r * classes, classes);
    const double row_lse = log_sum_exp(xr);
    plse[r] = T(row_lse);
    if (pt[r] == ignore_index) return;
    const T* x = px + r * classes;
    const double smooth = double(classes) * row_lse - sum_in_float64(classes, [&](int64_t j) { return double(x[j]); });
    row_nll[r] = row_lse - double(xr[pt[r]]);
    row_loss[r] = (1.0 - epsilon) * row_nll[r] + epsilon / double(classes) * smooth;
  });
  double total_loss = 0.0, total_nll = 0.0;
  int64_t counted = 0;
  for (int64_t r = 0; r < rows; ++r) {
    total_loss += row_loss[r];
    total_nll += row_nll[r];
    counted += pt[r] != ignore_index;
  }
  *loss.data<double>() = total_loss;
  *nll.data<double>() = total_nll;
  *count.data<double>() = double(counted);
}

template <typename T>
void label_smoothed_ce_backward_rows(const Tensor& logits, const Tensor& targets, const Tensor& lse, double epsilon,
                                     int64_t ignore_index, double scale, const Tensor& grad_logits) {
  const int64_t rows = logits.size(0), classes = logits.size(1);
  const T *px = logits.data<T>(), *plse = lse.data<T>();
  const int64_t* pt = targets.data<int64_t>();
  T* pg = grad_logits.data<T>();
  check_targets(pt, rows, classes, ignore_index);
  const T uniform_share = T(scale * epsilon / double(classes)), gold_share = T(scale * (1.0 - epsilon));
  for_each_row(rows, classes, [&](int64_t r) {
    RowOut<T> gr(pg + r * classes, classes);
    if (pt[r] == ignore_index) {
      gr.setZero();
      return;
    }
    gr = (RowIn<T>(px + r * classes, classes) - plse[r]).exp() * T(scale) - uniform_share;
    gr[pt[r]] -= gold_share;
  });
}

}  // namespace

void CpuBackend::label_smoothed_ce(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                                   const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count) {
  dispatch_floating(logits.dtype(), [&](auto tag) {
    label_smoothed_ce_rows<decltype(tag)>(logits, targets, epsilon, ignore_index, lse, loss, nll, count);
  });
}

void CpuBackend::label_smoothed_ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                                            double epsilon, int64_t ignore_index, double scale,
                                            const Tensor& grad_logits) {
  dispatch_floating(logits.dtype(), [&](auto tag) {
    label_smoothed_ce_backward_rows<decltype(tag)>(logits, targets, lse, epsilon, ignore_index, scale, grad_logits);
  });
}

}  // namespace attn::cpu
