// Shape ops (core/ops.hpp): concatenation and stacking (copies), split/chunk (views),
// triangular parts and the causal mask.
#include <string_view>

#include "core/backend.hpp"
#include "core/ops.hpp"

namespace attn::ops {

namespace {

std::string shapes_of(const std::vector<Tensor>& xs) {
  std::string s;
  for (const Tensor& x : xs) s += (s.empty() ? "" : ", ") + x.shape().str();
  return s;
}

// Bool [n, m], true where keep(i, j).
template <typename Keep>
Tensor mask_matrix(int64_t n, int64_t m, Device device, Keep keep) {
  Tensor mask({n, m}, DType::Bool, Device::cpu());
  bool* p = mask.data<bool>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) p[i * m + j] = keep(i, j);
  return mask.to(device);
}

Tensor triangle(const Tensor& x, std::string_view name, bool lower, int64_t k) {
  ATTN_CHECK(x.defined() && x.dim() >= 2, "{}: needs at least 2 dims, got shape {}", name,
             x.defined() ? x.shape().str() : "undefined");
  const int64_t n = x.size(-2), m = x.size(-1);
  Tensor keep = mask_matrix(n, m, x.device(), [&](int64_t i, int64_t j) { return lower ? j - i <= k : j - i >= k; });
  return where(keep, x, zeros({}, x.dtype(), x.device()));
}

}  // namespace

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  ATTN_CHECK(!xs.empty(), "cat: no tensors given");
  const Tensor& first = xs.front();
  const int d = wrap_dim(dim, first.dim());
  ATTN_CHECK(first.dim() > 0, "cat: cannot concatenate 0-d tensors");
  int64_t total = 0;
  for (const Tensor& x : xs) {
    ATTN_CHECK(x.dtype() == first.dtype(), "cat: dtype mismatch, {} vs {}", dtype_name(first.dtype()),
               dtype_name(x.dtype()));
    ATTN_CHECK(x.device() == first.device(), "cat: device mismatch, {} vs {}", first.device().str(), x.device().str());
    bool compatible = x.dim() == first.dim();
    for (int k = 0; compatible && k < x.dim(); ++k) compatible = k == d || x.shape()[k] == first.shape()[k];
    ATTN_CHECK(compatible, "cat: shapes {} must match except in dim {}", shapes_of(xs), d);
    total += x.shape()[d];
  }
  Shape shape = first.shape();
  shape[d] = total;
  Tensor out = empty(shape, first.dtype(), first.device());
  int64_t offset = 0;
  for (const Tensor& x : xs) {
    backend_for(out.device()).copy(x, out.narrow(d, offset, x.shape()[d]));
    offset += x.shape()[d];
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  ATTN_CHECK(!xs.empty(), "stack: no tensors given");
  const int d = wrap_dim(dim, xs.front().dim() + 1);
  std::vector<Tensor> expanded;
  for (const Tensor& x : xs) {
    ATTN_CHECK(x.shape() == xs.front().shape(), "stack: all shapes must be equal, got {}", shapes_of(xs));
    expanded.push_back(x.unsqueeze(d));
  }
  return cat(expanded, d);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  ATTN_CHECK(x.defined() && x.dim() > 0, "split: needs a tensor with at least 1 dim");
  ATTN_CHECK(split_size > 0, "split: split size must be positive, got {}", split_size);
  const int d = wrap_dim(dim, x.dim());
  std::vector<Tensor> parts;
  for (int64_t start = 0; start < x.shape()[d]; start += split_size)
    parts.push_back(x.narrow(d, start, std::min(split_size, x.shape()[d] - start)));
  return parts;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  ATTN_CHECK(chunks > 0, "chunk: number of chunks must be positive, got {}", chunks);
  ATTN_CHECK(x.defined() && x.dim() > 0, "chunk: needs a tensor with at least 1 dim");
  const int64_t n = x.size(dim);
  return split(x, std::max<int64_t>(1, (n + chunks - 1) / chunks), dim);
}

Tensor tril(const Tensor& x, int64_t k) { return triangle(x, "tril", true, k); }
Tensor triu(const Tensor& x, int64_t k) { return triangle(x, "triu", false, k); }

Tensor causal_mask(int64_t n, int64_t m, Device device) {
  ATTN_CHECK(n >= 0 && m >= 0, "causal_mask: negative size [{}, {}]", n, m);
  return mask_matrix(n, m, device, [](int64_t i, int64_t j) { return j > i; });
}

}  // namespace attn::ops
