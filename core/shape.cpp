#include "core/shape.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace attn {

Shape::Shape(std::initializer_list<int64_t> dims) {
  ATTN_CHECK(dims.size() <= size_t(kMaxDims), "a tensor has at most {} dims, got {}", kMaxDims, dims.size());
  for (int64_t d : dims) d_[ndim_++] = d;
}

Shape::Shape(const std::vector<int64_t>& dims) {
  ATTN_CHECK(dims.size() <= size_t(kMaxDims), "a tensor has at most {} dims, got {}", kMaxDims, dims.size());
  for (int64_t d : dims) d_[ndim_++] = d;
}

Shape Shape::filled(int ndim, int64_t value) {
  Shape s;
  for (int i = 0; i < ndim; ++i) s.push_back(value);
  return s;
}

void Shape::push_back(int64_t v) {
  ATTN_CHECK(ndim_ < kMaxDims, "a tensor has at most {} dims", kMaxDims);
  d_[ndim_++] = v;
}

void Shape::insert(int pos, int64_t v) {
  ATTN_CHECK(ndim_ < kMaxDims, "a tensor has at most {} dims", kMaxDims);
  for (int i = ndim_; i > pos; --i) d_[i] = d_[i - 1];
  d_[pos] = v;
  ++ndim_;
}

void Shape::erase(int pos) {
  for (int i = pos; i + 1 < ndim_; ++i) d_[i] = d_[i + 1];
  --ndim_;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < ndim_; ++i) n *= d_[i];
  return n;
}

std::string Shape::str() const {
  return fmt::format("[{}]", fmt::join(begin(), end(), ", "));
}

bool Shape::operator==(const Shape& o) const {
  if (ndim_ != o.ndim_) return false;
  for (int i = 0; i < ndim_; ++i)
    if (d_[i] != o.d_[i]) return false;
  return true;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides = Shape::filled(shape.size(), 1);
  for (int i = shape.size() - 2; i >= 0; --i) strides[i] = strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  int n = std::max(a.size(), b.size());
  Shape out = Shape::filled(n, 1);
  for (int i = 0; i < n; ++i) {
    int ia = a.size() - n + i, ib = b.size() - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    ATTN_CHECK(da == db || da == 1 || db == 1, "shapes {} and {} cannot be broadcast together (dim {}: {} vs {})",
               a.str(), b.str(), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int wrap_dim(int64_t dim, int ndim) {
  int64_t n = std::max(ndim, 1);
  ATTN_CHECK(dim >= -n && dim < n, "dim {} out of range for a tensor with {} dims", dim, ndim);
  return int(dim < 0 ? dim + n : dim);
}

}  // namespace attn
