// What the kernels are told besides their tensors: the element-wise and reduction op
// enums and their scalar parameters. Shared by the raw ops (core/ops.hpp) and the kernel
// interface (core/backend.hpp), so code that calls ops does not depend on the interface.
#pragma once

namespace attn {

enum class UnaryOp {
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Relu, Elu, Gelu, Sigmoid, Tanh, Sin, Cos,
  Pow,    // x^a
  Clamp,  // min(max(x, a), b)
  Reciprocal, Square,
  // Scalar forms of the binary ops: x op a
  AddScalar, MulScalar, RSubScalar /* a - x */, RDivScalar /* a / x */,
};

struct UnaryParams {
  double a = 0.0;  // Pow: exponent; Elu: alpha; Clamp: low; *Scalar: the scalar
  double b = 0.0;  // Clamp: high
};

enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge };
inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

enum class ReduceOp { Sum, Mean, Max, Min, LogSumExp, Norm2, Prod };

}  // namespace attn
