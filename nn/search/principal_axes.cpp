#include "nn/search/principal_axes.hpp"

#include <algorithm>
#include <vector>

#include "core/cpu/eigen.hpp"
#include "core/error.hpp"

#include <Eigen/Dense>  // after core/cpu/eigen.hpp

namespace attn::nn {
namespace {

using RowMajorFloat = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
constexpr int64_t kRowsPerBlock = 4096;  // rows widened to float64 at a time

}  // namespace

PrincipalAxes principal_axes(const Tensor& rows, int64_t count) {
  ATTN_CHECK(rows.dim() == 2 && rows.dtype() == DType::Float32 && rows.device().is_cpu() && rows.size(0) >= 1 &&
                 count >= 1 && count <= rows.size(1),
             "principal_axes: needs float32 [N, D] rows on the CPU (N >= 1) and 1 <= count <= D, got {} {} and "
             "count {}",
             dtype_name(rows.dtype()), rows.shape().str(), count);
  const Tensor x = rows.contiguous();
  const int64_t n = x.size(0), d = x.size(1);
  const RowMajorFloat all(x.data<float>(), n, d);
  const Eigen::RowVectorXd mean = all.cast<double>().colwise().sum() / double(n);
  // Covariance (times n) in float64, a block of rows at a time: no float64 copy of all rows.
  Eigen::MatrixXd scatter = Eigen::MatrixXd::Zero(d, d);
  for (int64_t begin = 0; begin < n; begin += kRowsPerBlock) {
    const int64_t size = std::min(kRowsPerBlock, n - begin);
    const Eigen::MatrixXd centred = all.middleRows(begin, size).cast<double>().rowwise() - mean;
    scatter.selfadjointView<Eigen::Lower>().rankUpdate(centred.transpose());
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(scatter.selfadjointView<Eigen::Lower>());
  ATTN_CHECK(solver.info() == Eigen::Success, "principal_axes: the eigendecomposition of the {}x{} covariance failed",
             d, d);
  // Eigenvalues come in increasing order: the last `count` columns, taken from the end.
  std::vector<float> axes(size_t(d * count));
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < count; ++j) axes[size_t(i * count + j)] = float(solver.eigenvectors()(i, d - 1 - j));
  const Eigen::VectorXd variances = solver.eigenvalues().cwiseMax(0.0);
  const double total = variances.sum();
  return {from_vector(axes, Shape{d, count}), total > 0 ? variances.tail(count).sum() / total : 1.0};
}

}  // namespace attn::nn
