// Differentiable views: the forward shares storage with x; the backward routes the view's
// gradient back to the base's shape:
//   view/reshape/squeeze/unsqueeze: reshape back;  permute: the inverse permutation;
//   transpose: the same transpose;  narrow/select: zeros of x's shape with the gradient
//   copied into the slice;  expand: summed back over the broadcast dims (ops::sum_to);
//   contiguous: identity.
#include "autograd/ops.hpp"

namespace attn {
namespace {

// Views whose gradient is the output gradient reshaped to the input's shape.
Tensor reshaping_view(const char* name, const Tensor& x, Tensor out) {
  return record(name, {x}, std::move(out),
                [shape = x.shape()](const Tensor& g) { return std::vector{g.reshape(shape)}; });
}

// Views of a part of x: the gradient is zero outside that part.
template <typename PartOf>
Tensor part_view(const char* name, const Tensor& x, PartOf part_of) {
  return record(name, {x}, part_of(x), [shape = x.shape(), dtype = x.dtype(), device = x.device(),
                                        part_of](const Tensor& g) {
    Tensor dx = zeros(shape, dtype, device);
    part_of(dx).copy_(g);
    return std::vector{dx};
  });
}

}  // namespace

// The forward views x's data (Tensor::view/reshape refuse a tensor recording gradients).
Tensor view(const Tensor& x, const Shape& shape) { return reshaping_view("view", x, x.data_only().view(shape)); }
Tensor reshape(const Tensor& x, const Shape& shape) {
  return reshaping_view("reshape", x, x.data_only().reshape(shape));
}
Tensor squeeze(const Tensor& x, int64_t dim) { return reshaping_view("squeeze", x, x.squeeze(dim)); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return reshaping_view("unsqueeze", x, x.unsqueeze(dim)); }

Tensor permute(const Tensor& x, const std::vector<int>& dims) {
  Tensor out = x.permute(dims);  // validates dims
  std::vector<int> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], x.dim())] = int(i);
  return record("permute", {x}, out, [inverse](const Tensor& g) { return std::vector{g.permute(inverse)}; });
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  return record("transpose", {x}, x.transpose(d0, d1),
                [d0, d1](const Tensor& g) { return std::vector{g.transpose(d0, d1)}; });
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return part_view("narrow", x, [dim, start, length](const Tensor& t) { return t.narrow(dim, start, length); });
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  return part_view("select", x, [dim, index](const Tensor& t) { return t.select(dim, index); });
}

Tensor expand(const Tensor& x, const Shape& shape) {
  return record("expand", {x}, x.expand(shape),
                [shape = x.shape()](const Tensor& g) { return std::vector{ops::sum_to(g, shape)}; });
}

Tensor contiguous(const Tensor& x) {
  return record("contiguous", {x}, x.contiguous(), [](const Tensor& g) { return std::vector{g}; });
}

}  // namespace attn
