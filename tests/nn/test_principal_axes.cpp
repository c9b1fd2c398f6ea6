// PCA for kNN-MT's reduced keys (nn/search/principal_axes.hpp): the axes of points spread along
// known orthogonal directions with known variances, largest first; the kept share of the
// variance; orthonormal columns; argument errors.
#include <catch.hpp>

#include <cmath>
#include <vector>

#include "nn/search/principal_axes.hpp"

using namespace attn;

TEST_CASE("principal axes of points spread along three known orthogonal directions") {
  // An orthonormal basis of R^3 (a rotation of the unit vectors) and points at ±3 u1, ±2 u2,
  // ±0.1 u3 around a centre c: the covariance has eigenvalues ∝ 9, 4, 0.01 along u1, u2, u3.
  const double s = 1.0 / std::sqrt(2.0), t = 1.0 / std::sqrt(3.0), w = 1.0 / std::sqrt(6.0);
  const std::vector<std::vector<double>> u = {{s, -s, 0.0}, {t, t, t}, {w, w, -2.0 * w}};
  const std::vector<double> spread = {3.0, 2.0, 0.1}, centre = {5.0, -1.0, 2.0};
  std::vector<float> points;
  for (int axis = 0; axis < 3; ++axis)
    for (double sign : {1.0, -1.0})
      for (int d = 0; d < 3; ++d) points.push_back(float(centre[d] + sign * spread[axis] * u[axis][d]));
  const Tensor rows = from_vector(points, Shape{6, 3});

  const nn::PrincipalAxes two = nn::principal_axes(rows, 2);
  REQUIRE(two.axes.shape() == Shape{3, 2});
  const std::vector<double> a = two.axes.to_vector();
  for (int j = 0; j < 2; ++j) {
    double along = 0.0, norm = 0.0;
    for (int d = 0; d < 3; ++d) {
      along += a[d * 2 + j] * u[j][d];
      norm += a[d * 2 + j] * a[d * 2 + j];
    }
    CHECK(std::abs(along) == Approx(1.0).margin(1e-5));  // the axis is ±u_j (a sign is a choice)
    CHECK(norm == Approx(1.0).margin(1e-6));
  }
  CHECK(std::abs(a[0] * a[1] + a[2] * a[3] + a[4] * a[5]) < 1e-6);  // orthogonal columns
  CHECK(two.kept_variance == Approx(13.0 / 13.01).epsilon(1e-6));
  CHECK(nn::principal_axes(rows, 3).kept_variance == Approx(1.0));
}

TEST_CASE("principal_axes refuses a count outside 1..D and non-float32 rows") {
  const Tensor rows = from_vector(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  CHECK_THROWS_WITH(nn::principal_axes(rows, 0), Catch::Contains("1 <= count <= D"));
  CHECK_THROWS_WITH(nn::principal_axes(rows, 3), Catch::Contains("count 3"));
  CHECK_THROWS_WITH(nn::principal_axes(from_vector(std::vector<double>{1, 2}, Shape{1, 2}), 1),
                    Catch::Contains("float64"));
}
