// Differentiable element-wise unary ops: forward by ops::unary, backward dx = dy * f'(x) by
// the fused ops::unary_backward kernel, which gets both x and y = f(x) (exp, sigmoid and
// tanh differentiate cheaper from y).
#include "autograd/ops.hpp"

namespace attn {
namespace {

Tensor unary_op(const char* name, UnaryOp op, const Tensor& x, UnaryParams params = {}) {
  Tensor y = ops::unary(op, x, params);
  return record(name, {x}, y, [op, params, x = detach(x), y](const Tensor& g) {
    return std::vector{ops::unary_backward(op, x, y, g, params)};
  });
}

}  // namespace

Tensor neg(const Tensor& x) { return unary_op("neg", UnaryOp::Neg, x); }
Tensor abs(const Tensor& x) { return unary_op("abs", UnaryOp::Abs, x); }
Tensor exp(const Tensor& x) { return unary_op("exp", UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary_op("log", UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary_op("sqrt", UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary_op("rsqrt", UnaryOp::Rsqrt, x); }
Tensor relu(const Tensor& x) { return unary_op("relu", UnaryOp::Relu, x); }
Tensor elu(const Tensor& x, double alpha) { return unary_op("elu", UnaryOp::Elu, x, {alpha}); }
Tensor gelu(const Tensor& x) { return unary_op("gelu", UnaryOp::Gelu, x); }
Tensor sigmoid(const Tensor& x) { return unary_op("sigmoid", UnaryOp::Sigmoid, x); }
Tensor tanh(const Tensor& x) { return unary_op("tanh", UnaryOp::Tanh, x); }
Tensor sin(const Tensor& x) { return unary_op("sin", UnaryOp::Sin, x); }
Tensor cos(const Tensor& x) { return unary_op("cos", UnaryOp::Cos, x); }
Tensor pow(const Tensor& x, double exponent) { return unary_op("pow", UnaryOp::Pow, x, {exponent}); }
Tensor clamp(const Tensor& x, double low, double high) { return unary_op("clamp", UnaryOp::Clamp, x, {low, high}); }

}  // namespace attn
