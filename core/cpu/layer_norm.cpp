// CPU layer normalisation over the last dim of a contiguous [rows, D] tensor
// (Ba et al. 2016; core/backend.hpp). Per row, with biased variance:
//   mean = (1/D) sum_j x_j,  rstd = 1 / sqrt((1/D) sum_j (x_j - mean)^2 + eps)
//   xhat = (x - mean) * rstd,  y = xhat * gamma + beta
// Row statistics are accumulated in float64 (two passes over the row, which stays in cache).
// Backward, with g = dy * gamma:
//   dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat))
//   dgamma = sum_rows dy * xhat,  dbeta = sum_rows dy
// dgamma/dbeta are reduced over rows per block of columns, in a fixed order, so the result
// does not depend on the thread count.
#include <algorithm>
#include <cmath>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/row_loop.hpp"

namespace attn::cpu {
namespace {

template <typename T>
struct RowStats {
  T mean, rstd;
};

template <typename T>
RowStats<T> row_stats(const T* x, int64_t cols, double eps) {
  const double mean = sum_in_float64(cols, [&](int64_t j) { return double(x[j]); }) / double(cols);
  const double var = sum_in_float64(cols, [&](int64_t j) {
                       const double centered = double(x[j]) - mean;
                       return centered * centered;
                     }) / double(cols);
  return {T(mean), T(1.0 / std::sqrt(var + eps))};
}

template <typename T>
void layer_norm_rows(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, const Tensor& out,
                     const Tensor& mean, const Tensor& rstd) {
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  const T* px = x.data<T>();
  T* py = out.data<T>();
  T* pmean = mean.data<T>();
  T* prstd = rstd.data<T>();
  const T* pgamma = gamma.defined() ? gamma.data<T>() : nullptr;
  const T* pbeta = beta.defined() ? beta.data<T>() : nullptr;
  for_each_row(rows, cols, [&](int64_t r) {
    RowIn<T> xr(px + r * cols, cols);
    RowOut<T> yr(py + r * cols, cols);
    const RowStats<T> s = row_stats(px + r * cols, cols, eps);
    pmean[r] = s.mean;
    prstd[r] = s.rstd;
    yr = (xr - s.mean) * s.rstd;
    if (pgamma) yr *= RowIn<T>(pgamma, cols);
    if (pbeta) yr += RowIn<T>(pbeta, cols);
  });
}

template <typename T>
void layer_norm_dx(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                   const Tensor& dx) {
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  const T *px = x.data<T>(), *pdy = dy.data<T>(), *pmean = mean.data<T>(), *prstd = rstd.data<T>();
  const T* pgamma = gamma.defined() ? gamma.data<T>() : nullptr;
  T* pdx = dx.data<T>();
  for_each_row(rows, cols, [&](int64_t r) {
    RowIn<T> xr(px + r * cols, cols), dyr(pdy + r * cols, cols);
    RowOut<T> dxr(pdx + r * cols, cols);
    const T m = pmean[r], rs = prstd[r];
    // dxr first holds g = dy * gamma, then is rewritten in place into dx.
    if (pgamma) dxr = dyr * RowIn<T>(pgamma, cols);
    else dxr = dyr;
    const T* g = dxr.data();
    const T* xrow = xr.data();
    const double mean_g = sum_in_float64(cols, [&](int64_t j) { return double(g[j]); }) / double(cols);
    const double mean_gx =
        sum_in_float64(cols, [&](int64_t j) { return double(g[j]) * double((xrow[j] - m) * rs); }) / double(cols);
    dxr = rs * (dxr - T(mean_g) - (xr - m) * rs * T(mean_gx));
  });
}

// Width of the column blocks that dgamma/dbeta are reduced over (each block is one task).
constexpr int64_t kAffineGradBlock = 256;

template <typename T>
void layer_norm_affine_grads(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                             const Tensor& dgamma, const Tensor& dbeta) {
  const int64_t cols = x.size(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  const T *px = x.data<T>(), *pdy = dy.data<T>(), *pmean = mean.data<T>(), *prstd = rstd.data<T>();
  T* pdgamma = dgamma.defined() ? dgamma.data<T>() : nullptr;
  T* pdbeta = dbeta.defined() ? dbeta.data<T>() : nullptr;
  const int64_t blocks = (cols + kAffineGradBlock - 1) / kAffineGradBlock;
  const bool parallel = blocks > 1 && rows * cols >= kRowParallelGrain && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = b * kAffineGradBlock, width = std::min(kAffineGradBlock, cols - c0);
    Eigen::ArrayXd sum_dy_xhat = Eigen::ArrayXd::Zero(width), sum_dy = Eigen::ArrayXd::Zero(width);
    for (int64_t r = 0; r < rows; ++r) {
      const T *x = px + r * cols + c0, *g = pdy + r * cols + c0;
      const T m = pmean[r], rs = prstd[r];
      for (int64_t j = 0; j < width; ++j) {
        sum_dy_xhat[j] += double(g[j]) * double((x[j] - m) * rs);
        sum_dy[j] += double(g[j]);
      }
    }
    if (pdgamma) RowOut<T>(pdgamma + c0, width) = sum_dy_xhat.cast<T>();
    if (pdbeta) RowOut<T>(pdbeta + c0, width) = sum_dy.cast<T>();
  }
}

}  // namespace

void CpuBackend::layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, const Tensor& out,
                            const Tensor& mean, const Tensor& rstd) {
  dispatch_floating(x.dtype(), [&](auto tag) { layer_norm_rows<decltype(tag)>(x, gamma, beta, eps, out, mean, rstd); });
}

void CpuBackend::layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                     const Tensor& rstd, const Tensor& dx, const Tensor& dgamma,
                                     const Tensor& dbeta) {
  dispatch_floating(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    layer_norm_dx<T>(dy, x, gamma, mean, rstd, dx);
    if (dgamma.defined() || dbeta.defined()) layer_norm_affine_grads<T>(dy, x, mean, rstd, dgamma, dbeta);
  });
}

}  // namespace attn::cpu
