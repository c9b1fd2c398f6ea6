// Reductions (core/ops.hpp): dims are wrapped and deduplicated, the kernel writes the
// keepdim form, and the reduced dims are dropped afterwards unless keepdim.
#include <algorithm>
#include <string_view>

#include "core/backend.hpp"
#include "core/ops.hpp"

namespace attn::ops {

namespace {

// Which dims `dims` reduces (all when empty).
std::vector<bool> reduced_mask(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<bool> reduced(size_t(x.dim()), dims.empty());
  for (int64_t d : dims) reduced[size_t(wrap_dim(d, x.dim()))] = true;
  return reduced;
}

Shape keepdim_shape(const Shape& shape, const std::vector<bool>& reduced) {
  Shape out = shape;
  for (int d = 0; d < shape.size(); ++d)
    if (reduced[size_t(d)]) out[d] = 1;
  return out;
}

Shape dropped_shape(const Shape& shape, const std::vector<bool>& reduced) {
  Shape out;
  for (int d = 0; d < shape.size(); ++d)
    if (!reduced[size_t(d)]) out.push_back(shape[d]);
  return out;
}

Tensor reduce(ReduceOp op, std::string_view name, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  ATTN_CHECK(x.defined(), "{}: undefined tensor", name);
  const bool needs_float = op == ReduceOp::Mean || op == ReduceOp::LogSumExp || op == ReduceOp::Norm2;
  ATTN_CHECK(!needs_float || is_floating(x.dtype()), "{}: needs a floating dtype, got {} (shape {})", name,
             dtype_name(x.dtype()), x.shape().str());
  const std::vector<bool> reduced = reduced_mask(x, dims);
  if (op == ReduceOp::Max || op == ReduceOp::Min)
    for (int d = 0; d < x.dim(); ++d)
      ATTN_CHECK(!reduced[size_t(d)] || x.shape()[d] > 0, "{}: cannot reduce over dim {} of extent 0 (shape {})", name,
                 d, x.shape().str());
  const Tensor input = x.dtype() == DType::Bool ? x.to(DType::Int64) : x;  // sums of masks count
  Tensor out = empty(keepdim_shape(x.shape(), reduced), input.dtype(), x.device());
  backend_for(x.device()).reduce(op, input, out);
  return keepdim ? out : out.view(dropped_shape(x.shape(), reduced));
}

ValuesIndices arg_reduce(bool is_max, const Tensor& x, int64_t dim, bool keepdim) {
  const char* name = is_max ? "max" : "min";
  ATTN_CHECK(x.defined(), "{}: undefined tensor", name);
  ATTN_CHECK(x.dim() > 0, "{}: needs at least one dim, got a 0-d tensor", name);
  const int d = wrap_dim(dim, x.dim());
  ATTN_CHECK(x.shape()[d] > 0, "{}: cannot reduce over dim {} of extent 0 (shape {})", name, d, x.shape().str());
  std::vector<bool> reduced(size_t(x.dim()), false);
  reduced[size_t(d)] = true;
  const Shape shape = keepdim_shape(x.shape(), reduced);
  ValuesIndices r{empty(shape, x.dtype(), x.device()), empty(shape, DType::Int64, x.device())};
  backend_for(x.device()).arg_reduce(is_max, x, d, r.values, r.indices);
  if (!keepdim) r = {r.values.squeeze(d), r.indices.squeeze(d)};
  return r;
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return reduce(ReduceOp::Sum, "sum", x, dims, keepdim); }
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return reduce(ReduceOp::Mean, "mean", x, dims, keepdim); }
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return reduce(ReduceOp::Max, "amax", x, dims, keepdim); }
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return reduce(ReduceOp::Min, "amin", x, dims, keepdim); }
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(ReduceOp::LogSumExp, "logsumexp", x, dims, keepdim);
}
Tensor norm(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return reduce(ReduceOp::Norm2, "norm", x, dims, keepdim); }

ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { return arg_reduce(true, x, dim, keepdim); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { return arg_reduce(false, x, dim, keepdim); }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return arg_reduce(true, x, dim, keepdim).indices; }

Tensor cumsum(const Tensor& x, int64_t dim, bool reverse) {
  ATTN_CHECK(x.defined(), "cumsum: undefined tensor");
  ATTN_CHECK(x.dtype() != DType::Bool, "cumsum: not defined for bool (shape {})", x.shape().str());
  if (x.dim() == 0) return x.clone();
  const int d = wrap_dim(dim, x.dim());
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  backend_for(x.device()).cumsum(x, d, reverse, out);
  return out;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  ATTN_CHECK(grad.defined(), "sum_to: undefined tensor");
  ATTN_CHECK(broadcast_shapes(shape, grad.shape()) == grad.shape(),
             "sum_to: shape {} does not broadcast to the gradient's shape {}", shape.str(), grad.shape().str());
  if (grad.shape() == shape) return grad;
  const int lead = grad.dim() - shape.size();
  std::vector<int64_t> dims;
  for (int d = 0; d < grad.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.shape()[d] != 1)) dims.push_back(d);
  return sum(grad, dims, true).view(shape);
}

}  // namespace attn::ops
