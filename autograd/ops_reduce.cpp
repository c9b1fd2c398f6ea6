// Differentiable reductions. Each backward first puts the output gradient back in keepdim
// form (reduced dims as size 1) and lets broadcasting spread it over the input:
//   sum: dx = g;  mean: dx = g / n;  logsumexp: dx = g * exp(x - y);  norm (L2): dx = g * x / y
//   (0 where y = 0);  amax/amin: g goes to the elements equal to the extremum, split evenly
//   between ties (as PyTorch's amax does);  cumsum: dx = the cumsum of g in the other direction.
#include <algorithm>

#include "autograd/ops.hpp"

namespace attn {
namespace {

// The output shape with keepdim = true: reduced dims (all when dims is empty) become 1.
Shape keepdim_shape(const Shape& input, const std::vector<int64_t>& dims) {
  Shape shape = input;
  if (dims.empty()) return Shape::filled(input.size(), 1);
  for (int64_t d : dims) shape[wrap_dim(d, input.size())] = 1;
  return shape;
}

// A reduction's output (or its gradient) viewed with the reduced dims kept as size 1.
Tensor keepdim_form(const Tensor& t, const Shape& input, const std::vector<int64_t>& dims, bool keepdim) {
  return keepdim ? t : t.reshape(keepdim_shape(input, dims));
}

int64_t reduced_count(const Shape& input, const std::vector<int64_t>& dims) {
  return input.numel() / std::max<int64_t>(1, keepdim_shape(input, dims).numel());
}

// Records a reduction whose backward is grad_fn(x, y, g) with y and g in keepdim form.
template <typename GradFn>
Tensor record_reduction(const char* name, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, Tensor y,
                        GradFn grad_fn) {
  return record(name, {x}, y, [x = detach(x), y, dims, keepdim, grad_fn](const Tensor& g) {
    const Shape& shape = x.shape();
    Tensor dx = grad_fn(x, keepdim_form(y, shape, dims, keepdim), keepdim_form(g, shape, dims, keepdim));
    return std::vector{dx.shape() == shape ? dx : dx.expand(shape)};
  });
}

Tensor extremum(const char* name, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, bool is_max) {
  Tensor y = is_max ? ops::amax(x, dims, keepdim) : ops::amin(x, dims, keepdim);
  return record_reduction(name, x, dims, keepdim, y, [dims](const Tensor& x, const Tensor& y, const Tensor& g) {
    Tensor hits = ops::eq(x, y).to(x.dtype());
    Tensor ties = ops::sum(hits, dims, true);
    return ops::mul(hits, ops::div(g, ties));
  });
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return record_reduction("sum", x, dims, keepdim, ops::sum(x, dims, keepdim),
                          [](const Tensor&, const Tensor&, const Tensor& g) { return g; });
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  double n = double(reduced_count(x.shape(), dims));
  return record_reduction("mean", x, dims, keepdim, ops::mean(x, dims, keepdim),
                          [n](const Tensor&, const Tensor&, const Tensor& g) { return ops::div(g, n); });
}

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extremum("amax", x, dims, keepdim, true);
}

Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return extremum("amin", x, dims, keepdim, false);
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return record_reduction("logsumexp", x, dims, keepdim, ops::logsumexp(x, dims, keepdim),
                          [](const Tensor& x, const Tensor& y, const Tensor& g) {
                            return ops::mul(g, ops::exp(ops::sub(x, y)));
                          });
}

Tensor norm(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return record_reduction("norm", x, dims, keepdim, ops::norm(x, dims, keepdim),
                          [](const Tensor& x, const Tensor& y, const Tensor& g) {
                            Tensor safe_y = ops::where(ops::eq(y, 0.0), scalar_tensor(1.0, y.dtype(), y.device()), y);
                            return ops::mul(x, ops::div(g, safe_y));
                          });
}

Tensor cumsum(const Tensor& x, int64_t dim, bool reverse) {
  return record("cumsum", {x}, ops::cumsum(x, dim, reverse),
                [dim, reverse](const Tensor& g) { return std::vector{ops::cumsum(g, dim, !reverse)}; });
}

}  // namespace attn
