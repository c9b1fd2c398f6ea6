// Indexing ops (core/ops.hpp): embedding lookup and its scatter-add backward,
// index_select, top-k and gather along the last dim. Indices are validated first, so a bad
// id is an error naming the op and the bound, never a read out of bounds: host indices on
// the spot (naming the id), device indices on the device, checked at the next read-back
// (core/deferred_checks.hpp) while the kernels leave out-of-range rows alone.
#include <string_view>

#include "core/backend.hpp"
#include "core/deferred_checks.hpp"
#include "core/ops.hpp"

namespace attn::ops {

namespace {

// Defers the check that every device index lies in [0, bound).
void defer_range_check(const Tensor& indices, int64_t bound, std::string_view op) {
  const Tensor outside = add(lt(indices, 0.0).to(DType::Float32), ge(indices, double(bound)).to(DType::Float32));
  defer_check(amax(outside),
              [op = std::string(op), bound, shape = indices.shape().str()](double) {
                return fmt::format("{}: an index out of range [0, {}) among the indices of shape {} (on the device)",
                                   op, bound, shape);
              });
}

// The indices as a contiguous int64 tensor on `device`, after checking every one lies in [0, bound).
Tensor checked_indices(const Tensor& indices, int64_t bound, std::string_view op, Device device) {
  ATTN_CHECK(indices.defined(), "{}: undefined index tensor", op);
  ATTN_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
             "{}: indices must be int64 or int32, got {} (shape {})", op, dtype_name(indices.dtype()),
             indices.shape().str());
  if (!indices.device().is_cpu() && indices.device() == device) {
    const Tensor on_device = indices.to(DType::Int64).contiguous();
    defer_range_check(on_device, bound, op);
    return on_device;
  }
  const Tensor host = indices.to(DType::Int64).to(Device::cpu()).contiguous();
  const int64_t* p = host.data<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i)
    ATTN_CHECK(p[i] >= 0 && p[i] < bound, "{}: index {} out of range [0, {}) at position {} of indices of shape {}", op,
               p[i], bound, i, indices.shape().str());
  return host.to(device);
}

void check_matrix(const Tensor& t, std::string_view op, std::string_view what) {
  ATTN_CHECK(t.defined(), "{}: undefined {}", op, what);
  ATTN_CHECK(t.dim() == 2, "{}: {} must be 2-D, got shape {}", op, what, t.shape().str());
}

Shape with_last(const Shape& lead, int64_t last) {
  Shape s = lead;
  s.push_back(last);
  return s;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  check_matrix(weight, "embedding", "weight");
  const Tensor flat = checked_indices(indices, weight.shape()[0], "embedding", weight.device()).reshape({-1});
  Tensor out = empty({flat.numel(), weight.shape()[1]}, weight.dtype(), weight.device());
  backend_for(weight.device()).index_select_rows(weight, flat, out);
  return out.view(with_last(indices.shape(), weight.shape()[1]));
}

Tensor embedding_backward(const Tensor& grad_out, const Tensor& indices, int64_t num_rows, int64_t padding_idx) {
  ATTN_CHECK(grad_out.defined() && grad_out.dim() >= 1, "embedding_backward: gradient must have at least 1 dim");
  ATTN_CHECK(grad_out.dim() == indices.dim() + 1 && with_last(indices.shape(), grad_out.size(-1)) == grad_out.shape(),
             "embedding_backward: gradient of shape {} does not match indices of shape {}", grad_out.shape().str(),
             indices.shape().str());
  ATTN_CHECK(padding_idx < num_rows, "embedding_backward: padding index {} out of range [0, {})", padding_idx, num_rows);
  const Tensor flat = checked_indices(indices, num_rows, "embedding_backward", grad_out.device()).reshape({-1});
  const int64_t width = grad_out.size(-1);
  Tensor grad = zeros({num_rows, width}, grad_out.dtype(), grad_out.device());
  backend_for(grad.device()).index_add_rows(grad, flat, grad_out.reshape({flat.numel(), width}));
  if (padding_idx >= 0) grad.select(0, padding_idx).zero_();  // the padding row gets no gradient
  return grad;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& indices) {
  ATTN_CHECK(x.defined() && x.dim() >= 1, "index_select: needs a tensor with at least 1 dim");
  ATTN_CHECK(indices.dim() == 1, "index_select: indices must be 1-D, got shape {}", indices.shape().str());
  const int d = wrap_dim(dim, x.dim());
  const Tensor idx = checked_indices(indices, x.shape()[d], "index_select", x.device());
  // Move `dim` to the front and treat everything else as one row.
  const Tensor front = x.transpose(0, d).contiguous();
  const Tensor rows = front.reshape({x.shape()[d], -1});
  Tensor out = empty({idx.numel(), rows.shape()[1]}, x.dtype(), x.device());
  backend_for(x.device()).index_select_rows(rows, idx, out);
  Shape front_shape = front.shape();
  front_shape[0] = idx.numel();
  return out.view(front_shape).transpose(0, d);
}

ValuesIndices topk(const Tensor& x, int64_t k, bool largest) {
  ATTN_CHECK(x.defined() && x.dim() >= 1, "topk: needs a tensor with at least 1 dim");
  const int64_t n = x.size(-1);
  ATTN_CHECK(k >= 0 && k <= n, "topk: k = {} out of range [0, {}] for shape {}", k, n, x.shape().str());
  const Tensor rows = x.data_only().contiguous().reshape({-1, n});
  ValuesIndices r{empty({rows.shape()[0], k}, x.dtype(), x.device()), empty({rows.shape()[0], k}, DType::Int64, x.device())};
  if (k > 0) backend_for(x.device()).topk(rows, k, largest, r.values, r.indices);
  Shape shape = x.shape();
  shape[shape.size() - 1] = k;
  return {r.values.view(shape), r.indices.view(shape)};
}

Tensor gather_last(const Tensor& x, const Tensor& index) {
  ATTN_CHECK(x.defined() && x.dim() >= 1, "gather_last: needs a tensor with at least 1 dim");
  ATTN_CHECK(index.defined() && with_last(index.shape(), x.size(-1)) == x.shape(),
             "gather_last: index of shape {} does not match tensor of shape {} (expected the leading dims)",
             index.shape().str(), x.shape().str());
  const int64_t n = x.size(-1);
  const Tensor idx = checked_indices(index, n, "gather_last", x.device()).reshape({-1});
  const Tensor rows = x.data_only().contiguous().reshape({-1, n});
  Tensor out = empty({rows.shape()[0]}, x.dtype(), x.device());
  backend_for(x.device()).gather_last(rows, idx, out);
  return out.view(index.shape());
}

}  // namespace attn::ops
