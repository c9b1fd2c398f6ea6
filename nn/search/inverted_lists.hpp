// Inverted lists for kNN-MT's approximate search (knn_datastore.hpp; the IVF index of Jégou et
// al. 2011, "Product quantization for nearest neighbor search", §4, without the quantization):
// the keys are split into `lists` cells by k-means, each key in the cell of its nearest
// centroid. A query then compares itself with the centroids and searches only the keys of the
// `probes` nearest cells — a fraction probes / lists of the keys — at the price of missing a
// neighbour that lies in a cell whose centroid is farther.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace attn::nn {

struct InvertedLists {
  Tensor centroids;              // float32 [L, d]
  std::vector<int64_t> offsets;  // L + 1 entries: cell l holds rows order[offsets[l]] … order[offsets[l+1] − 1]
  std::vector<int64_t> order;    // every row index once, grouped by cell, increasing within a cell
};

// k-means (Lloyd's iterations) of float32 rows [N, d] (CPU, N ≥ lists ≥ 1) into `lists`
// cells, trained on at most kTrainingRowsPerList rows per cell taken at evenly spaced indices
// (deterministic: no random numbers), then every row assigned to its nearest centroid.
InvertedLists build_inverted_lists(const Tensor& rows, int64_t lists, int64_t iterations = 10);
inline constexpr int64_t kTrainingRowsPerList = 256;

// The lists of rows given each row's list (0 ≤ list < centroids' rows), rows in increasing order
// within a list.
InvertedLists group_into_lists(Tensor centroids, const std::vector<int64_t>& list_of_row);

// |row|² for each row of float32 [N, d] on the CPU (summed in float64): the searches' distances
// are |q|² + (|x|² − 2 q·x), the products on GEMM.
std::vector<float> squared_norms(const Tensor& rows);

// For each query row of float32 [B, d]: the `probes` cells (1 ≤ probes ≤ L) whose centroids
// are nearest in squared L2, nearest first.
std::vector<std::vector<int64_t>> nearest_lists(const Tensor& centroids, const Tensor& queries, int64_t probes);

}  // namespace attn::nn
