// Differentiable matrix products.
//
// matmul (NumPy semantics): for C = A @ B over broadcast batch dims, dA = dC @ B^T and
// dB = A^T @ dC, with the transposes passed as strided views (BLAS flags, no copies) and
// broadcast batch dims summed back (ops::sum_to). 1-D operands are promoted to matrices
// ([K] -> [1, K] on the left, [K, 1] on the right) for the backward. When B is a plain
// matrix shared by a batch of A, dB is one GEMM with the batch flattened into rows.
//
// linear: y = x @ W^T + b with W [out, in]; x is flattened to rows [N, in] so the forward
// (bias preloaded into the output, beta = 1), dx = dy @ W and dW = dy^T @ x are each one
// GEMM, and db is the column sum of dy.
#include "autograd/ops.hpp"

namespace attn {
namespace {

Tensor matrix_transpose(const Tensor& t) { return t.transpose(-2, -1); }

Shape batch_dims(Shape shape) {
  shape.erase(shape.size() - 1);
  shape.erase(shape.size() - 1);
  return shape;
}

Tensor reduce_to(const Tensor& grad, const Shape& shape) {
  return grad.shape() == shape ? grad : ops::sum_to(grad, shape);
}

std::vector<Tensor> matmul_grads(const Tensor& a, const Tensor& b, const Tensor& grad, bool need_a, bool need_b) {
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  Shape out2 = broadcast_shapes(batch_dims(a2.shape()), batch_dims(b2.shape()));
  out2.push_back(a2.size(-2));
  out2.push_back(b2.size(-1));
  Tensor g2 = grad.reshape(out2);
  Tensor da, db;
  if (need_a) da = reduce_to(ops::matmul(g2, matrix_transpose(b2)), a2.shape()).reshape(a.shape());
  if (need_b && b2.dim() == 2 && a2.dim() > 2) {
    Tensor a_rows = a2.reshape({-1, a2.size(-1)});
    Tensor g_rows = g2.reshape({-1, g2.size(-1)});
    db = ops::matmul(matrix_transpose(a_rows), g_rows).reshape(b.shape());
  } else if (need_b) {
    db = reduce_to(ops::matmul(matrix_transpose(a2), g2), b2.shape()).reshape(b.shape());
  }
  return {da, db};
}

void check_linear_args(const Tensor& x, const Tensor& w, const Tensor& b) {
  ATTN_CHECK(w.dim() == 2, "linear: weight must be 2-D [out, in], got {}", w.shape().str());
  ATTN_CHECK(x.dim() >= 1 && x.size(-1) == w.size(1), "linear: input {} does not match weight {} (in = {})",
             x.shape().str(), w.shape().str(), w.size(1));
  ATTN_CHECK(x.dtype() == w.dtype(), "linear: input dtype {} differs from weight dtype {}", dtype_name(x.dtype()),
             dtype_name(w.dtype()));
  if (!b.defined()) return;
  ATTN_CHECK(b.dim() == 1 && b.size(0) == w.size(0), "linear: bias {} does not match weight {} (out = {})",
             b.shape().str(), w.shape().str(), w.size(0));
  ATTN_CHECK(b.dtype() == w.dtype(), "linear: bias dtype {} differs from weight dtype {}", dtype_name(b.dtype()),
             dtype_name(w.dtype()));
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  bool need_a = requires_grad(a), need_b = requires_grad(b);
  return record("matmul", {a, b}, ops::matmul(a, b),
                [a = detach(a), b = detach(b), need_a, need_b](const Tensor& g) {
                  return matmul_grads(a, b, g, need_a, need_b);
                });
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  check_linear_args(x, w, b);
  const int64_t out_features = w.size(0);
  Tensor x_rows = detach(x).reshape({-1, x.size(-1)});
  Tensor y_rows({x_rows.size(0), out_features}, x.dtype(), x.device());
  if (b.defined()) y_rows.copy_(b);
  ops::matmul_into(x_rows, w.transpose(0, 1), y_rows, 1.0, b.defined() ? 1.0 : 0.0);
  Shape out_shape = x.shape();
  out_shape[out_shape.size() - 1] = out_features;

  bool need_x = requires_grad(x), need_w = requires_grad(w), need_b = requires_grad(b);
  auto backward = [x_shape = x.shape(), x_rows = need_w ? x_rows : Tensor(), w = need_x ? detach(w) : Tensor(),
                   need_b, out_features](const Tensor& g) {
    Tensor g_rows = g.reshape({-1, out_features});
    Tensor dx, dw, db;
    if (w.defined()) {
      dx = Tensor({g_rows.size(0), w.size(1)}, g.dtype(), g.device());
      ops::matmul_into(g_rows, w, dx);
      dx = dx.view(x_shape);
    }
    if (x_rows.defined()) {
      dw = Tensor(w.defined() ? w.shape() : Shape{out_features, x_rows.size(1)}, g.dtype(), g.device());
      ops::matmul_into(g_rows.transpose(0, 1), x_rows, dw);
    }
    if (need_b) db = ops::sum(g_rows, {0});
    return std::vector{dx, dw, db};
  };
  return record("linear", {x, w, b}, y_rows.view(out_shape), backward);
}

}  // namespace attn
