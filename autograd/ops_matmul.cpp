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
//
// linear_relu: y = relu(x @ W^T + b), the first layer of a Transformer FFN. The GEMM writes
// x @ W^T and one fused pass adds the bias and applies the ReLU in place (ops::bias_relu_);
// the backward gets dz = y > 0 ? dy : 0 and db from one fused pass over y and dy
// (ops::bias_relu_backward) and then runs linear's two GEMMs on dz. Only y is saved (not
// the pre-activation).
#include <utility>

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

// x flattened to rows [N, in], and the uninitialised output rows [N, out] and its final shape.
struct LinearRows {
  Tensor x, y;
  Shape out_shape;
};

LinearRows linear_rows(const Tensor& x, const Tensor& w) {
  LinearRows r;
  r.x = detach(x).reshape({-1, x.size(-1)});
  r.y = Tensor({r.x.size(0), w.size(0)}, x.dtype(), x.device());
  r.out_shape = x.shape();
  r.out_shape[r.out_shape.size() - 1] = w.size(0);
  return r;
}

// The GEMM part of a linear layer's backward, shared by linear and linear_relu: from the
// gradient of the product g_rows [N, out], dx = g W and dW = gᵀ x, each one GEMM and each
// only when wanted (x_rows and w are kept only for the gradient that needs them).
class LinearGemmGrads {
 public:
  LinearGemmGrads(const Tensor& x, const Tensor& w, const Tensor& x_rows, bool need_x, bool need_w)
      : x_shape_(x.shape()), w_shape_(w.shape()), x_rows_(need_w ? x_rows : Tensor()),
        w_(need_x ? detach(w) : Tensor()) {}

  int64_t out_features() const { return w_shape_[0]; }

  std::pair<Tensor, Tensor> operator()(const Tensor& g_rows) const {
    Tensor dx, dw;
    if (w_.defined()) {
      dx = Tensor({g_rows.size(0), w_shape_[1]}, g_rows.dtype(), g_rows.device());
      ops::matmul_into(g_rows, w_, dx);
      dx = dx.view(x_shape_);
    }
    if (x_rows_.defined()) {
      dw = Tensor(w_shape_, g_rows.dtype(), g_rows.device());
      ops::matmul_into(g_rows.transpose(0, 1), x_rows_, dw);
    }
    return {dx, dw};
  }

 private:
  Shape x_shape_, w_shape_;
  Tensor x_rows_, w_;
};

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
  LinearRows rows = linear_rows(x, w);
  if (b.defined()) rows.y.copy_(b);
  ops::matmul_into(rows.x, w.transpose(0, 1), rows.y, 1.0, b.defined() ? 1.0 : 0.0);

  bool need_x = requires_grad(x), need_w = requires_grad(w), need_b = requires_grad(b);
  auto backward = [grads = LinearGemmGrads(x, w, rows.x, need_x, need_w), need_b](const Tensor& g) {
    Tensor g_rows = g.reshape({-1, grads.out_features()});
    auto [dx, dw] = grads(g_rows);
    return std::vector{dx, dw, need_b ? ops::sum(g_rows, {0}) : Tensor()};
  };
  return record("linear", {x, w, b}, rows.y.view(rows.out_shape), backward);
}

Tensor linear_relu(const Tensor& x, const Tensor& w, const Tensor& b) {
  check_linear_args(x, w, b);
  LinearRows rows = linear_rows(x, w);
  ops::matmul_into(rows.x, w.transpose(0, 1), rows.y);
  ops::bias_relu_(rows.y, b);

  bool need_x = requires_grad(x), need_w = requires_grad(w), need_b = requires_grad(b);
  auto backward = [grads = LinearGemmGrads(x, w, rows.x, need_x, need_w), y = rows.y, need_b](const Tensor& g) {
    ops::BiasReluGrads pre = ops::bias_relu_backward(y, g.reshape(y.shape()), need_b);
    auto [dx, dw] = grads(pre.dz);
    return std::vector{dx, dw, pre.dbias};
  };
  return record("linear_relu", {x, w, b}, rows.y.view(rows.out_shape), backward);
}

}  // namespace attn
