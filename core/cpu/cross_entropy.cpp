// CPU fused label-smoothed cross entropy over logits [N, V] (docs/models.md §1.6, legacy
// eps/V form), without materialising log-probabilities or a one-hot matrix. Per row with
// gold y and lse = log sum_v exp(x_v) (computed stably around the row max):
//   nll    = -log p_y             = lse - x_y
//   smooth = -sum_{v=1..V} log p_v = V * lse - sum_v x_v     (the sum includes y)
//   loss   = (1 - eps) * nll + (eps / V) * smooth
// i.e. cross entropy against q = (1 - eps) onehot(y) + eps/V. Rows whose target is
// ignore_index contribute nothing and are not counted. When asked, the same pass also writes
// the gradient of the summed loss,
//   dloss/dx_v = p_v - eps/V - (1 - eps) [v == y]      (0 on ignored rows)
// with p_v = exp(x_v - max) / sum_u exp(x_u - max): the exponentials the log-sum-exp needs
// are kept in the gradient row while it is in cache, so no second exp pass over the logits
// is made in the backward (which only scales this by the incoming gradient).
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

// The maximum of a row and the sum of the exponentials around it.
template <typename T>
struct RowExpSum {
  T max;
  T sum;
};

// The row's max and sum_v exp(x_v - max); with a gradient row given, its exponentials are
// left there.
template <typename T>
RowExpSum<T> row_exp_sum(const RowIn<T>& xr, T* exps) {
  const T max = xr.maxCoeff();
  if (!exps) return {max, (xr - max).exp().sum()};
  RowOut<T> e(exps, xr.size());
  e = (xr - max).exp();
  return {max, e.sum()};
}

// Turns the row's exponentials into the gradient of its loss (see the header).
template <typename T>
void exps_to_gradient(T* row, int64_t classes, RowExpSum<T> exps, int64_t target, double epsilon) {
  RowOut<T> g(row, classes);
  g = g * T(1.0 / double(exps.sum)) - T(epsilon / double(classes));
  g[target] -= T(1.0 - epsilon);
}

template <typename T>
void label_smoothed_ce_rows(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                            const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count,
                            const Tensor& grad_logits) {
  const int64_t rows = logits.size(0), classes = logits.size(1);
  const T* px = logits.data<T>();
  const int64_t* pt = targets.data<int64_t>();
  T* plse = lse.data<T>();
  T* pg = grad_logits.defined() ? grad_logits.data<T>() : nullptr;
  check_targets(pt, rows, classes, ignore_index);
  std::vector<double> row_loss(rows, 0.0), row_nll(rows, 0.0);
  for_each_row(rows, classes, [&](int64_t r) {
    const T* x = px + r * classes;
    const bool ignored = pt[r] == ignore_index;
    T* grad_row = pg && !ignored ? pg + r * classes : nullptr;
    const RowExpSum<T> exps = row_exp_sum(RowIn<T>(x, classes), grad_row);
    const double row_lse = double(exps.max) + std::log(double(exps.sum));
    plse[r] = T(row_lse);
    if (ignored) {
      if (pg) RowOut<T>(pg + r * classes, classes).setZero();
      return;
    }
    if (grad_row) exps_to_gradient(grad_row, classes, exps, pt[r], epsilon);
    const double smooth = double(classes) * row_lse - sum_in_float64(classes, [&](int64_t j) { return double(x[j]); });
    row_nll[r] = row_lse - double(x[pt[r]]);
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

}  // namespace

void CpuBackend::label_smoothed_ce(const Tensor& logits, const Tensor& targets, double epsilon, int64_t ignore_index,
                                   const Tensor& lse, const Tensor& loss, const Tensor& nll, const Tensor& count,
                                   const Tensor& grad_logits) {
  dispatch_floating(logits.dtype(), [&](auto tag) {
    label_smoothed_ce_rows<decltype(tag)>(logits, targets, epsilon, ignore_index, lse, loss, nll, count, grad_logits);
  });
}

}  // namespace attn::cpu
