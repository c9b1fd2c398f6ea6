#include "nn/search/inverted_lists.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attn::nn {
namespace {

constexpr int64_t kRowsPerBlock = 4096;  // rows compared with every centroid in one product

struct Assignment {
  std::vector<int64_t> cell;    // per row, its nearest centroid
  std::vector<float> distance;  // and the squared distance to it
};

// Each row's nearest centroid, |x|² + |c|² − 2 x·c with the products on GEMM, a block of rows at a time.
Assignment assign(const Tensor& rows, const Tensor& centroids) {
  const int64_t n = rows.size(0), cells = centroids.size(0);
  const std::vector<float> x_norms = squared_norms(rows), c_norms = squared_norms(centroids);
  const Tensor centroids_t = centroids.transpose(0, 1);
  Assignment out{std::vector<int64_t>(size_t(n)), std::vector<float>(size_t(n))};
  for (int64_t begin = 0; begin < n; begin += kRowsPerBlock) {
    const int64_t size = std::min(kRowsPerBlock, n - begin);
    const Tensor products = ops::matmul(rows.narrow(0, begin, size), centroids_t);  // [size, cells]
    const float* p = products.data<float>();
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < size; ++r) {
      int64_t best = 0;
      float best_distance = std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < cells; ++c) {
        const float distance = c_norms[size_t(c)] - 2.0f * p[r * cells + c];
        if (distance < best_distance) best_distance = distance, best = c;
      }
      out.cell[size_t(begin + r)] = best;
      out.distance[size_t(begin + r)] = std::max(0.0f, x_norms[size_t(begin + r)] + best_distance);
    }
  }
  return out;
}

// Rows at evenly spaced indices, `count` of them.
Tensor spaced_rows(const Tensor& rows, int64_t count) {
  const int64_t n = rows.size(0), d = rows.size(1);
  std::vector<float> picked(size_t(count * d));
  const float* p = rows.data<float>();
  for (int64_t i = 0; i < count; ++i) std::copy_n(p + (i * n / count) * d, d, picked.begin() + i * d);
  return from_vector(picked, Shape{count, d});
}

// One Lloyd step: each centroid the mean of its rows (in float64). A cell left empty takes the
// row farthest from its centroid among those not yet taken, so every cell keeps rows.
Tensor recentre(const Tensor& rows, const Assignment& assignment, int64_t cells) {
  const int64_t n = rows.size(0), d = rows.size(1);
  const float* p = rows.data<float>();
  std::vector<double> sums(size_t(cells * d), 0.0);
  std::vector<int64_t> counts(size_t(cells), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = assignment.cell[size_t(i)];
    ++counts[size_t(c)];
    for (int64_t j = 0; j < d; ++j) sums[size_t(c * d + j)] += p[i * d + j];
  }
  std::vector<int64_t> farthest;  // rows by their distance to their centroid, farthest first
  size_t next_farthest = 0;
  std::vector<float> centroids(size_t(cells * d));
  for (int64_t c = 0; c < cells; ++c) {
    if (counts[size_t(c)] == 0) {
      if (farthest.empty()) {
        farthest.resize(size_t(n));
        std::iota(farthest.begin(), farthest.end(), 0);
        std::stable_sort(farthest.begin(), farthest.end(), [&](int64_t a, int64_t b) {
          return assignment.distance[size_t(a)] > assignment.distance[size_t(b)];
        });
      }
      std::copy_n(p + farthest[next_farthest++] * d, d, centroids.begin() + c * d);
      continue;
    }
    for (int64_t j = 0; j < d; ++j)
      centroids[size_t(c * d + j)] = float(sums[size_t(c * d + j)] / double(counts[size_t(c)]));
  }
  return from_vector(centroids, Shape{cells, d});
}

}  // namespace

std::vector<float> squared_norms(const Tensor& rows) {
  const Tensor x = rows.contiguous();
  const int64_t n = x.size(0), d = x.size(1);
  const float* p = x.data<float>();
  std::vector<float> norms(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int64_t j = 0; j < d; ++j) sum += double(p[i * d + j]) * double(p[i * d + j]);
    norms[size_t(i)] = float(sum);
  }
  return norms;
}

InvertedLists build_inverted_lists(const Tensor& rows, int64_t lists, int64_t iterations) {
  ATTN_CHECK(rows.dim() == 2 && rows.dtype() == DType::Float32 && rows.device().is_cpu() && lists >= 1 &&
                 lists <= rows.size(0) && iterations >= 0,
             "build_inverted_lists: needs float32 [N, d] rows on the CPU and 1 <= lists <= N, got {} {} and {} lists",
             dtype_name(rows.dtype()), rows.shape().str(), lists);
  const Tensor x = rows.contiguous();
  const Tensor training = spaced_rows(x, std::min(x.size(0), lists * kTrainingRowsPerList));
  Tensor centroids = spaced_rows(training, lists);
  for (int64_t step = 0; step < iterations; ++step)
    centroids = recentre(training, assign(training, centroids), lists);

  return group_into_lists(centroids, assign(x, centroids).cell);
}

InvertedLists group_into_lists(Tensor centroids, const std::vector<int64_t>& list_of_row) {
  const int64_t lists = centroids.size(0);
  // A stable counting sort by list keeps rows in increasing order within each.
  InvertedLists index{std::move(centroids), std::vector<int64_t>(size_t(lists) + 1, 0),
                      std::vector<int64_t>(list_of_row.size())};
  for (size_t row = 0; row < list_of_row.size(); ++row) {
    const int64_t list = list_of_row[row];
    ATTN_CHECK(list >= 0 && list < lists, "group_into_lists: row {} is in list {}, not one of the {}", row, list,
               lists);
    ++index.offsets[size_t(list) + 1];
  }
  std::partial_sum(index.offsets.begin(), index.offsets.end(), index.offsets.begin());
  std::vector<int64_t> filled(index.offsets.begin(), index.offsets.end() - 1);
  for (size_t row = 0; row < list_of_row.size(); ++row)
    index.order[size_t(filled[size_t(list_of_row[row])]++)] = int64_t(row);
  return index;
}

std::vector<std::vector<int64_t>> nearest_lists(const Tensor& centroids, const Tensor& queries, int64_t probes) {
  const int64_t cells = centroids.size(0);
  ATTN_CHECK(queries.dim() == 2 && queries.size(1) == centroids.size(1) && probes >= 1 && probes <= cells,
             "nearest_lists: queries must be [B, {}] and 1 <= probes <= {}, got {} and {} probes", centroids.size(1),
             cells, queries.shape().str(), probes);
  const std::vector<float> c_norms = squared_norms(centroids);
  const Tensor products = ops::matmul(queries.contiguous(), centroids.transpose(0, 1));  // [B, L]
  const float* p = products.data<float>();
  std::vector<std::vector<int64_t>> out(size_t(queries.size(0)));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < queries.size(0); ++r) {
    std::vector<int64_t>& order = out[size_t(r)];
    order.resize(size_t(cells));
    std::iota(order.begin(), order.end(), 0);
    // |q|² is the same for every cell: rank by |c|² − 2 q·c, ties by cell index.
    const auto distance = [&](int64_t c) { return c_norms[size_t(c)] - 2.0f * p[r * cells + c]; };
    std::partial_sort(order.begin(), order.begin() + probes, order.end(), [&](int64_t a, int64_t b) {
      return distance(a) < distance(b) || (distance(a) == distance(b) && a < b);
    });
    order.resize(size_t(probes));
  }
  return out;
}

}  // namespace attn::nn
