// Principal component analysis of a set of vectors, for kNN-MT's reduced keys
// (knn_datastore.hpp): the `count` directions along which the rows vary most — the
// eigenvectors of their covariance with the largest eigenvalues — as the columns of a float32
// [D, count] matrix P, largest first. Of all projections onto `count` orthonormal directions,
// x ↦ x·P keeps the largest share of the rows' squared distances to one another.
#pragma once
#include <cstdint>

#include "core/tensor.hpp"

namespace attn::nn {

struct PrincipalAxes {
  Tensor axes;                // float32 [D, count], orthonormal columns, largest variance first
  double kept_variance = 0;  // the share of the rows' total variance along them, in [0, 1]
};

// rows: float32 [N, D] on the CPU, N ≥ 1; 1 ≤ count ≤ D.
PrincipalAxes principal_axes(const Tensor& rows, int64_t count);

}  // namespace attn::nn
