// The IVF index of kNN-MT's approximate search (nn/search/inverted_lists.hpp): k-means finds
// well-separated clusters and their means; grouping rows by list; each query's nearest lists
// against a double-precision ranking; argument errors.
#include <catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "core/rng.hpp"
#include "nn/search/inverted_lists.hpp"

using namespace attn;

namespace {

// kClusters clusters of kPerCluster points each, around centres far apart (cluster c at 20·c on
// axis c % 3 and −20·c on the others), noise uniform in ±0.5; point i is in cluster i % kClusters.
constexpr int64_t kClusters = 5, kPerCluster = 40, kDim = 3;

std::vector<double> centre(int64_t c) {
  std::vector<double> x(kDim, -20.0 * double(c));
  x[size_t(c % kDim)] = 20.0 * double(c);
  return x;
}

Tensor clustered_points() {
  Generator gen(4);
  const std::vector<double> noise =
      uniform({kClusters * kPerCluster, kDim}, -0.5, 0.5, DType::Float32, &gen).to_vector();
  std::vector<float> points(noise.size());
  for (int64_t i = 0; i < kClusters * kPerCluster; ++i)
    for (int64_t d = 0; d < kDim; ++d)
      points[size_t(i * kDim + d)] = float(centre(i % kClusters)[size_t(d)] + noise[size_t(i * kDim + d)]);
  return from_vector(points, Shape{kClusters * kPerCluster, kDim});
}

}  // namespace

TEST_CASE("k-means lists hold exactly the clusters of well-separated points, centroids at their means") {
  const Tensor points = clustered_points();
  const std::vector<double> p = points.to_vector();
  const nn::InvertedLists lists = nn::build_inverted_lists(points, kClusters);
  REQUIRE(lists.centroids.shape() == Shape{kClusters, kDim});
  REQUIRE(lists.offsets.size() == size_t(kClusters + 1));
  REQUIRE(lists.order.size() == size_t(kClusters * kPerCluster));
  std::vector<int64_t> every(lists.order);
  std::sort(every.begin(), every.end());
  std::vector<int64_t> expected(every.size());
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(every == expected);  // each row once
  std::set<int64_t> clusters_seen;
  const std::vector<double> c = lists.centroids.to_vector();
  for (int64_t list = 0; list < kClusters; ++list) {
    const auto begin = lists.order.begin() + lists.offsets[size_t(list)];
    const auto end = lists.order.begin() + lists.offsets[size_t(list) + 1];
    REQUIRE(end - begin == kPerCluster);
    CHECK(std::is_sorted(begin, end));
    const int64_t cluster = *begin % kClusters;
    clusters_seen.insert(cluster);
    std::vector<double> mean(kDim, 0.0);
    for (auto it = begin; it != end; ++it) {
      CHECK(*it % kClusters == cluster);
      for (int64_t d = 0; d < kDim; ++d) mean[size_t(d)] += p[size_t(*it * kDim + d)] / double(kPerCluster);
    }
    for (int64_t d = 0; d < kDim; ++d) CHECK(c[size_t(list * kDim + d)] == Approx(mean[size_t(d)]).margin(1e-4));
  }
  CHECK(clusters_seen.size() == size_t(kClusters));
}

TEST_CASE("more lists than clusters: no list is left empty, every row in the list of its nearest centroid") {
  const Tensor points = clustered_points();
  const int64_t count = 3 * kClusters;
  const nn::InvertedLists lists = nn::build_inverted_lists(points, count);
  const std::vector<double> p = points.to_vector(), c = lists.centroids.to_vector();
  for (int64_t list = 0; list < count; ++list) {
    CHECK(lists.offsets[size_t(list) + 1] > lists.offsets[size_t(list)]);
    for (int64_t at = lists.offsets[size_t(list)]; at < lists.offsets[size_t(list) + 1]; ++at) {
      const int64_t row = lists.order[size_t(at)];
      auto distance = [&](int64_t centroid) {
        double sum = 0.0;
        for (int64_t d = 0; d < kDim; ++d) {
          const double diff = p[size_t(row * kDim + d)] - c[size_t(centroid * kDim + d)];
          sum += diff * diff;
        }
        return sum;
      };
      for (int64_t other = 0; other < count; ++other) CHECK(distance(list) <= distance(other) + 1e-3);
    }
  }
}

TEST_CASE("rows grouped by their lists, in increasing order within each") {
  const nn::InvertedLists lists = nn::group_into_lists(zeros({3, 2}), {2, 0, 2, 1, 0, 2});
  CHECK(lists.offsets == std::vector<int64_t>{0, 2, 3, 6});
  CHECK(lists.order == std::vector<int64_t>{1, 4, 3, 0, 2, 5});
  CHECK_THROWS_WITH(nn::group_into_lists(zeros({3, 2}), {0, 3}), Catch::Contains("row 1 is in list 3"));
}

TEST_CASE("each query's nearest lists, nearest first, against a double-precision ranking") {
  Generator gen(9);
  const Tensor centroids = normal({12, 4}, 0, 1, DType::Float32, &gen);
  const Tensor queries = normal({6, 4}, 0, 1, DType::Float32, &gen);
  const std::vector<double> c = centroids.to_vector(), q = queries.to_vector();
  const auto found = nn::nearest_lists(centroids, queries, 5);
  for (int64_t r = 0; r < 6; ++r) {
    std::vector<double> distance(12, 0.0);
    for (int64_t l = 0; l < 12; ++l)
      for (int64_t d = 0; d < 4; ++d) distance[size_t(l)] += (q[size_t(r * 4 + d)] - c[size_t(l * 4 + d)]) *
                                                             (q[size_t(r * 4 + d)] - c[size_t(l * 4 + d)]);
    std::vector<int64_t> order(12);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return distance[size_t(a)] < distance[size_t(b)]; });
    order.resize(5);
    CHECK(found[size_t(r)] == order);
  }
}

TEST_CASE("inverted lists: argument errors") {
  const Tensor points = clustered_points();
  CHECK_THROWS_WITH(nn::build_inverted_lists(points, 0), Catch::Contains("1 <= lists <= N"));
  CHECK_THROWS_WITH(nn::build_inverted_lists(points.narrow(0, 0, 3), 4), Catch::Contains("1 <= lists <= N"));
  CHECK_THROWS_WITH(nn::nearest_lists(zeros({4, 3}), zeros({2, 3}), 5), Catch::Contains("1 <= probes <= 4"));
  CHECK_THROWS_WITH(nn::nearest_lists(zeros({4, 3}), zeros({2, 2}), 1), Catch::Contains("queries must be [B, 3]"));
}
