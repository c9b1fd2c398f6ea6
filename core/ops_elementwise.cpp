// Element-wise ops (core/ops.hpp): validate dtypes and devices, broadcast shapes
// (NumPy rules), allocate the output and dispatch to the device's kernels.
#include <string_view>

#include "core/backend.hpp"
#include "core/ops.hpp"

namespace attn::ops {

namespace {

std::string_view unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Elu: return "elu";
    case UnaryOp::Gelu: return "gelu";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sin: return "sin";
    case UnaryOp::Cos: return "cos";
    case UnaryOp::Pow: return "pow";
    case UnaryOp::Clamp: return "clamp";
    case UnaryOp::Reciprocal: return "reciprocal";
    case UnaryOp::Square: return "square";
    case UnaryOp::AddScalar: return "add (scalar)";
    case UnaryOp::MulScalar: return "mul (scalar)";
    case UnaryOp::RSubScalar: return "rsub (scalar)";
    case UnaryOp::RDivScalar: return "rdiv (scalar)";
  }
  return "?";
}

// Unary ops that are exact on integers; the others need a floating dtype.
bool integer_friendly(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Relu: case UnaryOp::Square: case UnaryOp::Clamp:
    case UnaryOp::AddScalar: case UnaryOp::MulScalar: case UnaryOp::RSubScalar:
      return true;
    default:
      return false;
  }
}

void check_defined(const Tensor& t, std::string_view op) { ATTN_CHECK(t.defined(), "{}: undefined tensor", op); }

void check_same_dtype_device(const Tensor& a, const Tensor& b, std::string_view op) {
  ATTN_CHECK(a.dtype() == b.dtype(), "{}: dtype mismatch, {} vs {} (shapes {} and {})", op, dtype_name(a.dtype()),
             dtype_name(b.dtype()), a.shape().str(), b.shape().str());
  ATTN_CHECK(a.device() == b.device(), "{}: device mismatch, {} vs {}", op, a.device().str(), b.device().str());
}

Tensor scalar_like(double value, const Tensor& like, const Shape& shape) {
  return scalar_tensor(value, like.dtype(), like.device()).expand(shape);
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x, UnaryParams p) {
  check_defined(x, unary_name(op));
  ATTN_CHECK(is_floating(x.dtype()) || (integer_friendly(op) && x.dtype() != DType::Bool),
             "{}: not defined for dtype {} (shape {})", unary_name(op), dtype_name(x.dtype()), x.shape().str());
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  backend_for(x.device()).unary(op, x, out, p);
  return out;
}

Tensor neg(const Tensor& x) { return unary(UnaryOp::Neg, x); }
Tensor abs(const Tensor& x) { return unary(UnaryOp::Abs, x); }
Tensor exp(const Tensor& x) { return unary(UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary(UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary(UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(UnaryOp::Rsqrt, x); }
Tensor relu(const Tensor& x) { return unary(UnaryOp::Relu, x); }
Tensor elu(const Tensor& x, double alpha) { return unary(UnaryOp::Elu, x, {alpha}); }
Tensor gelu(const Tensor& x) { return unary(UnaryOp::Gelu, x); }
Tensor sigmoid(const Tensor& x) { return unary(UnaryOp::Sigmoid, x); }
Tensor tanh(const Tensor& x) { return unary(UnaryOp::Tanh, x); }
Tensor sin(const Tensor& x) { return unary(UnaryOp::Sin, x); }
Tensor cos(const Tensor& x) { return unary(UnaryOp::Cos, x); }
Tensor pow(const Tensor& x, double exponent) { return unary(UnaryOp::Pow, x, {exponent}); }

Tensor clamp(const Tensor& x, double low, double high) {
  ATTN_CHECK(low <= high, "clamp: low {} > high {}", low, high);
  return unary(UnaryOp::Clamp, x, {low, high});
}

Tensor unary_backward(UnaryOp op, const Tensor& x, const Tensor& y, const Tensor& dy, UnaryParams p) {
  check_defined(x, "unary_backward");
  check_defined(dy, "unary_backward");
  ATTN_CHECK(is_floating(x.dtype()), "{} backward: needs a floating dtype, got {}", unary_name(op), dtype_name(x.dtype()));
  check_same_dtype_device(x, dy, "unary_backward");
  ATTN_CHECK(x.shape() == dy.shape(), "{} backward: input shape {} vs gradient shape {}", unary_name(op),
             x.shape().str(), dy.shape().str());
  const Tensor out = y.defined() ? y : unary(op, x, p);
  ATTN_CHECK(out.shape() == x.shape(), "{} backward: output shape {} vs input shape {}", unary_name(op),
             out.shape().str(), x.shape().str());
  Tensor dx = empty(x.shape(), x.dtype(), x.device());
  backend_for(x.device()).unary_backward(op, x, out, dy, dx, p);
  return dx;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  check_defined(a, "binary op");
  check_defined(b, "binary op");
  check_same_dtype_device(a, b, "binary op");
  ATTN_CHECK(a.dtype() != DType::Bool || is_comparison(op) || op == BinaryOp::Maximum || op == BinaryOp::Minimum,
             "arithmetic on bool tensors (shapes {} and {})", a.shape().str(), b.shape().str());
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  Tensor out = empty(shape, is_comparison(op) ? DType::Bool : a.dtype(), a.device());
  backend_for(a.device()).binary(op, a.expand(shape), b.expand(shape), out);
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Minimum, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ge, a, b); }

Tensor add(const Tensor& a, double s) { return unary(UnaryOp::AddScalar, a, {s}); }
Tensor sub(const Tensor& a, double s) { return unary(UnaryOp::AddScalar, a, {-s}); }
Tensor mul(const Tensor& a, double s) { return unary(UnaryOp::MulScalar, a, {s}); }
Tensor div(const Tensor& a, double s) {
  check_defined(a, "div");
  ATTN_CHECK(is_floating(a.dtype()), "div: needs a floating dtype, got {}", dtype_name(a.dtype()));
  return binary(BinaryOp::Div, a, scalar_like(s, a, a.shape()));
}
Tensor rsub(double s, const Tensor& a) { return unary(UnaryOp::RSubScalar, a, {s}); }
Tensor rdiv(double s, const Tensor& a) { return unary(UnaryOp::RDivScalar, a, {s}); }

namespace {
Tensor compare_scalar(BinaryOp op, const Tensor& a, double s) {
  check_defined(a, "comparison");
  return binary(op, a, scalar_like(s, a, a.shape()));
}
}  // namespace

Tensor eq(const Tensor& a, double s) { return compare_scalar(BinaryOp::Eq, a, s); }
Tensor ne(const Tensor& a, double s) { return compare_scalar(BinaryOp::Ne, a, s); }
Tensor lt(const Tensor& a, double s) { return compare_scalar(BinaryOp::Lt, a, s); }
Tensor le(const Tensor& a, double s) { return compare_scalar(BinaryOp::Le, a, s); }
Tensor gt(const Tensor& a, double s) { return compare_scalar(BinaryOp::Gt, a, s); }
Tensor ge(const Tensor& a, double s) { return compare_scalar(BinaryOp::Ge, a, s); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_defined(cond, "where");
  ATTN_CHECK(cond.dtype() == DType::Bool, "where: condition must be bool, got {} (shape {})", dtype_name(cond.dtype()),
             cond.shape().str());
  check_same_dtype_device(a, b, "where");
  ATTN_CHECK(cond.device() == a.device(), "where: device mismatch, {} vs {}", cond.device().str(), a.device().str());
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape()), b.shape());
  Tensor out = empty(shape, a.dtype(), a.device());
  backend_for(a.device()).where(cond.expand(shape), a.expand(shape), b.expand(shape), out);
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  check_defined(x, "masked_fill");
  check_defined(mask, "masked_fill");
  ATTN_CHECK(broadcast_shapes(mask.shape(), x.shape()) == x.shape(),
             "masked_fill: mask of shape {} does not broadcast to the tensor's shape {}", mask.shape().str(),
             x.shape().str());
  return where(mask, scalar_like(value, x, x.shape()), x);
}

void add_(const Tensor& dst, const Tensor& src, double alpha) {
  check_defined(dst, "add_");
  check_defined(src, "add_");
  check_same_dtype_device(dst, src, "add_");
  ATTN_CHECK(broadcast_shapes(src.shape(), dst.shape()) == dst.shape(),
             "add_: source of shape {} does not broadcast to destination shape {}", src.shape().str(), dst.shape().str());
  Tensor addend = alpha == 1.0 ? src : mul(src, alpha);
  if (addend.shares_storage(dst)) addend = addend.clone();  // read everything before writing
  backend_for(dst.device()).binary(BinaryOp::Add, dst, addend.expand(dst.shape()), dst);
}

}  // namespace attn::ops
