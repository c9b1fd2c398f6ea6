// Shape: up to 8 extents stored inline (no heap allocation), used for shapes and strides.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace attn {

inline constexpr int kMaxDims = 8;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  static Shape filled(int ndim, int64_t value);

  int size() const { return ndim_; }
  bool empty() const { return ndim_ == 0; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  const int64_t* begin() const { return d_.data(); }
  const int64_t* end() const { return d_.data() + ndim_; }
  int64_t* begin() { return d_.data(); }
  int64_t* end() { return d_.data() + ndim_; }
  int64_t back() const { return d_[ndim_ - 1]; }

  void push_back(int64_t v);
  void insert(int pos, int64_t v);
  void erase(int pos);
  int64_t numel() const;  // product of extents (1 for a 0-d shape)
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  std::string str() const;  // "[2, 3, 4]"

  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  std::array<int64_t, kMaxDims> d_{};
  int ndim_ = 0;
};

// Row-major strides (in elements) of a contiguous tensor of this shape.
Shape contiguous_strides(const Shape& shape);
// NumPy broadcasting of two shapes; throws attn::Error naming both on mismatch.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Wraps a possibly negative dim into [0, ndim); throws naming dim and ndim when out of range.
int wrap_dim(int64_t dim, int ndim);

}  // namespace attn
