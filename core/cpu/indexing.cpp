// CPU indexing kernels: row gather (embedding lookup), deterministic row scatter-add (its
// backward), top-k along the last dim, and one-element-per-row gather.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/cpu/cpu_backend.hpp"
#include "core/cpu/strided_loop.hpp"

namespace attn::cpu {
namespace {

// The entries of a 1-D int64 index tensor (any stride) or of a 0-D one (every i reads it).
class IndexReader {
 public:
  explicit IndexReader(const Tensor& indices)
      : data_(indices.data<int64_t>()), stride_(indices.dim() > 0 ? indices.strides()[0] : 0) {}
  int64_t operator[](int64_t i) const { return data_[i * stride_]; }

 private:
  const int64_t* data_;
  int64_t stride_;
};

}  // namespace

void CpuBackend::index_select_rows(const Tensor& weight, const Tensor& indices, const Tensor& out) {
  const int64_t rows = indices.numel(), width = weight.shape()[1];
  const IndexReader idx(indices);
  dispatch_dtype(weight.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* w = weight.data<T>();
    T* o = out.data<T>();
    const int64_t row_stride = weight.strides()[0], col_stride = weight.strides()[1];
    parallel_ranges(rows, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const T* src = w + idx[i] * row_stride;
        T* dst = o + i * width;
        if (col_stride == 1) std::memcpy(dst, src, size_t(width) * sizeof(T));
        else for (int64_t j = 0; j < width; ++j) dst[j] = src[j * col_stride];
      }
    }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, width)));
  });
}

void CpuBackend::index_add_rows(const Tensor& grad_weight, const Tensor& indices, const Tensor& src) {
  const int64_t rows = indices.numel(), width = grad_weight.shape()[1];
  const IndexReader idx(indices);
  dispatch_dtype(grad_weight.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* g = grad_weight.data<T>();
    const T* s = src.data<T>();
    const int64_t g_row = grad_weight.strides()[0], g_col = grad_weight.strides()[1];
    const int64_t s_row = src.strides()[0], s_col = src.strides()[1];
    // Threads own disjoint column ranges and add rows in index order: deterministic.
    parallel_ranges(width, [&](int64_t lo, int64_t hi) {
      for (int64_t i = 0; i < rows; ++i) {
        T* dst = g + idx[i] * g_row;
        const T* from = s + i * s_row;
        if (g_col == 1 && s_col == 1) for (int64_t j = lo; j < hi; ++j) dst[j] += from[j];
        else for (int64_t j = lo; j < hi; ++j) dst[j * g_col] += from[j * s_col];
      }
    }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, rows)));
  });
}

void CpuBackend::topk(const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  const int64_t rows = x.shape()[0], n = x.shape()[1];
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* vp = values.data<T>();
    int64_t* ip = indices.data<int64_t>();
    parallel_ranges(rows, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t r = lo; r < hi; ++r) {
        const T* row = xp + r * n;
        std::iota(order.begin(), order.end(), int64_t(0));
        // Strict order: by value, then the lower index first among equal values.
        auto before = [row, largest](int64_t a, int64_t b) {
          if (row[a] != row[b]) return largest ? row[a] > row[b] : row[a] < row[b];
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          vp[r * k + j] = row[order[size_t(j)]];
          ip[r * k + j] = order[size_t(j)];
        }
      }
    }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n)));
  });
}

void CpuBackend::gather_last(const Tensor& x, const Tensor& index, const Tensor& out) {
  const int64_t rows = x.shape()[0], n = x.shape()[1];
  const IndexReader idx(index);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* o = out.data<T>();
    for (int64_t r = 0; r < rows; ++r) o[r] = xp[r * n + idx[r]];
  });
}

}  // namespace attn::cpu
