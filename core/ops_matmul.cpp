// Matrix products at the tensor level (core/ops.hpp): shape/dtype validation, NumPy matmul
// semantics, and the reduction of every case to the backend's batched GEMM on 3-D views.
//
// NumPy semantics: a 1-D first operand is a row vector [1, K] and a 1-D second operand a
// column vector [K, 1], the added dim being dropped from the result; dims before the last
// two are batch dims and broadcast against each other. Broadcast operands are never copied:
// they become stride-0 batch views.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/backend.hpp"
#include "core/ops.hpp"

namespace attn::ops {
namespace {

void check_operands(const char* op, const Tensor& a, const Tensor& b) {
  ATTN_CHECK(a.defined() && b.defined(), "{}: undefined operand", op);
  ATTN_CHECK(a.dim() >= 1 && b.dim() >= 1, "{}: operands need at least 1 dim, got shapes {} and {}", op,
             a.shape().str(), b.shape().str());
  ATTN_CHECK(a.dtype() == b.dtype(), "{}: dtypes differ: {} and {}", op, dtype_name(a.dtype()), dtype_name(b.dtype()));
  ATTN_CHECK(is_floating(a.dtype()), "{}: needs float32 or float64 operands, got {}", op, dtype_name(a.dtype()));
  ATTN_CHECK(a.device() == b.device(), "{}: operands are on {} and {}", op, a.device().str(), b.device().str());
}

Shape without_last(const Shape& s, int count) {
  Shape out;
  for (int i = 0; i + count < s.size(); ++i) out.push_back(s[i]);
  return out;
}

// The shape of a @ b for operands of at least 2 dims; throws naming both shapes.
Shape product_shape(const char* op, const Tensor& a, const Tensor& b) {
  const int64_t k_a = a.size(-1), k_b = b.size(-2);
  ATTN_CHECK(k_a == k_b, "{}: shapes {} and {} are not aligned ({} columns vs {} rows)", op, a.shape().str(),
             b.shape().str(), k_a, k_b);
  Shape shape;
  try {
    shape = broadcast_shapes(without_last(a.shape(), 2), without_last(b.shape(), 2));
  } catch (const Error&) {
    throw Error(fmt::format("{}: batch dims of shapes {} and {} cannot be broadcast", op, a.shape().str(),
                            b.shape().str()));
  }
  shape.push_back(a.size(-2));
  shape.push_back(b.size(-1));
  return shape;
}

// t with its batch dims (all but the last two) expanded to `batch`.
Tensor expand_batch(const Tensor& t, const Shape& batch) {
  Shape shape = batch;
  shape.push_back(t.size(-2));
  shape.push_back(t.size(-1));
  return t.expand(shape);
}

// A [B, rows, cols] view of t when its batch dims fold into one with a single stride.
std::optional<Tensor> fold_batch(const Tensor& t) {
  const int batch_dims = t.dim() - 2;
  int64_t batch = 1, stride = 0;
  for (int i = batch_dims - 1; i >= 0; --i) {
    if (t.size(i) == 1) continue;
    if (batch > 1 && t.stride(i) != stride * batch) return std::nullopt;
    if (batch == 1) stride = t.stride(i);
    batch *= t.size(i);
  }
  return Tensor(t.storage(), Shape{batch, t.size(-2), t.size(-1)}, Shape{stride, t.stride(-2), t.stride(-1)},
                t.offset(), t.dtype());
}

// out = alpha * a @ b + beta * out, all three with the same batch dims; out's matrices are
// row-major and do not overlap. Two batch dims that do not fold into one stride (heads split
// out of a projection, [B, H, T, d] with strides [T·H·d, d, H·d, 1]) go to the backend as one
// 4-D batch; more batch dims are looped over until two are left.
void gemm_over_batch(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  const std::optional<Tensor> a3 = fold_batch(a), b3 = fold_batch(b), out3 = fold_batch(out);
  if (a3 && b3 && out3) {
    backend_for(out.device()).batched_gemm(*a3, *b3, *out3, alpha, beta);
    return;
  }
  if (out.dim() == 4) {
    backend_for(out.device()).batched_gemm(a, b, out, alpha, beta);
    return;
  }
  for (int64_t i = 0; i < out.size(0); ++i) gemm_over_batch(a.select(0, i), b.select(0, i), out.select(0, i), alpha, beta);
}

// True when out's elements are all distinct and its last dim has stride 1: dims ordered by
// stride, each steps over everything the smaller ones span (a permutation of a dense tensor,
// or a narrowed one).
bool is_dense_row_major_matrices(const Tensor& out) {
  if (out.size(-1) > 1 && out.stride(-1) != 1) return false;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of every dim of extent > 1
  for (int i = 0; i < out.dim(); ++i)
    if (out.size(i) > 1) dims.emplace_back(out.stride(i), out.size(i));
  std::sort(dims.begin(), dims.end());
  int64_t span = 1;
  for (const auto& [stride, size] : dims) {
    if (stride < span) return false;
    span = stride * size;
  }
  return true;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_operands("matmul", a, b);
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a, b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  const Shape shape = product_shape("matmul", a2, b2);
  const Shape batch = without_last(shape, 2);
  Tensor out(shape, a.dtype(), a.device());
  gemm_over_batch(expand_batch(a2, batch), expand_batch(b2, batch), out, 1.0, 0.0);
  Shape result = batch;
  if (a.dim() > 1) result.push_back(shape[shape.size() - 2]);
  if (b.dim() > 1) result.push_back(shape.back());
  return out.view(result);
}

void matmul_into(const Tensor& a, const Tensor& b, const Tensor& out, double alpha, double beta) {
  check_operands("matmul_into", a, b);
  ATTN_CHECK(a.dim() >= 2 && a.dim() <= 4 && b.dim() >= 2 && b.dim() <= 4,
             "matmul_into: operands must be 2-D to 4-D, got shapes {} and {}", a.shape().str(), b.shape().str());
  const Shape shape = product_shape("matmul_into", a, b);
  ATTN_CHECK(out.defined() && out.shape() == shape, "matmul_into: {} @ {} gives {} but out has shape {}",
             a.shape().str(), b.shape().str(), shape.str(), out.defined() ? out.shape().str() : "undefined");
  ATTN_CHECK(out.dtype() == a.dtype(), "matmul_into: out is {} but the operands are {}", dtype_name(out.dtype()),
             dtype_name(a.dtype()));
  ATTN_CHECK(out.device() == a.device(), "matmul_into: out is on {} but the operands on {}", out.device().str(),
             a.device().str());
  ATTN_CHECK(is_dense_row_major_matrices(out),
             "matmul_into: out (shape {}, strides {}) must hold non-overlapping matrices with unit column stride",
             out.shape().str(), out.strides().str());
  ATTN_CHECK(!out.shares_storage(a) && !out.shares_storage(b), "matmul_into: out must not overlap an operand");
  const Shape batch = without_last(shape, 2);
  gemm_over_batch(expand_batch(a, batch), expand_batch(b, batch), out, alpha, beta);
}

}  // namespace attn::ops
