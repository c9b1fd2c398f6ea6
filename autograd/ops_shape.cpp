// Differentiable shape ops that join or cut tensors:
//   cat:   each input's gradient is its slice of the output gradient (a view, no copy);
//   stack: each input's gradient is its index of the output gradient;
//   split/chunk: one node with several outputs whose backward concatenates the pieces'
//          gradients (zeros for pieces no gradient reached), so k pieces cost one copy.
#include "autograd/ops.hpp"

namespace attn {
namespace {

std::vector<Tensor> record_pieces(const char* name, const Tensor& x, int64_t dim, std::vector<Tensor> pieces) {
  std::vector<Shape> shapes;
  for (const Tensor& piece : pieces) shapes.push_back(piece.shape());
  return record_multi(name, {x}, std::move(pieces),
                      [shapes, dim, dtype = x.dtype(), device = x.device()](const std::vector<Tensor>& grads) {
                        std::vector<Tensor> parts;
                        for (size_t i = 0; i < grads.size(); ++i)
                          parts.push_back(grads[i].defined() ? grads[i] : zeros(shapes[i], dtype, device));
                        return std::vector{ops::cat(parts, dim)};
                      });
}

}  // namespace

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  Tensor out = ops::cat(xs, dim);
  std::vector<int64_t> sizes;
  int d = wrap_dim(dim, out.dim());
  for (const Tensor& x : xs) sizes.push_back(x.size(d));
  return record("cat", xs, out, [sizes, d](const Tensor& g) {
    std::vector<Tensor> grads;
    int64_t start = 0;
    for (int64_t size : sizes) {
      grads.push_back(g.narrow(d, start, size));
      start += size;
    }
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  Tensor out = ops::stack(xs, dim);
  int d = wrap_dim(dim, out.dim());
  return record("stack", xs, out, [n = xs.size(), d](const Tensor& g) {
    std::vector<Tensor> grads;
    for (size_t i = 0; i < n; ++i) grads.push_back(g.select(d, int64_t(i)));
    return grads;
  });
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  return record_pieces("split", x, dim, ops::split(x, split_size, dim));
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  return record_pieces("chunk", x, dim, ops::chunk(x, chunks, dim));
}

}  // namespace attn
