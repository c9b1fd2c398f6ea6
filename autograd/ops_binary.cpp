// Differentiable binary ops with NumPy broadcasting, their scalar forms, where and
// masked_fill. Backwards return gradients in the broadcast (output) shape; the engine sums
// them down to each input's shape. Gradients an input does not need are not computed.
#include "autograd/ops.hpp"

namespace attn {
namespace {

Tensor zero_scalar(const Tensor& like) { return scalar_tensor(0.0, like.dtype(), like.device()); }

// Share of the gradient that goes to `a` for maximum (pick = gt) or minimum (pick = lt):
// 1 where a wins, 1/2 on ties (the gradient is split evenly), 0 where b wins.
Tensor winner_weight(const Tensor& a, const Tensor& b, bool is_max) {
  Tensor wins = (is_max ? ops::gt(a, b) : ops::lt(a, b)).to(a.dtype());
  Tensor ties = ops::eq(a, b).to(a.dtype());
  return ops::add(wins, ops::mul(ties, 0.5));
}

Tensor extremum(const char* name, const Tensor& a, const Tensor& b, bool is_max) {
  Tensor out = is_max ? ops::maximum(a, b) : ops::minimum(a, b);
  return record(name, {a, b}, out, [a = detach(a), b = detach(b), is_max](const Tensor& g) {
    Tensor ga = ops::mul(g, winner_weight(a, b, is_max));
    return std::vector{ga, ops::sub(g, ga)};
  });
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return record("add", {a, b}, ops::add(a, b), [](const Tensor& g) { return std::vector{g, g}; });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  bool need_b = requires_grad(b);
  return record("sub", {a, b}, ops::sub(a, b), [need_b](const Tensor& g) {
    return std::vector{g, need_b ? ops::neg(g) : Tensor()};
  });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  bool need_a = requires_grad(a), need_b = requires_grad(b);
  return record("mul", {a, b}, ops::mul(a, b),
                [a = need_b ? detach(a) : Tensor(), b = need_a ? detach(b) : Tensor()](const Tensor& g) {
                  return std::vector{b.defined() ? ops::mul(g, b) : Tensor(), a.defined() ? ops::mul(g, a) : Tensor()};
                });
}

// d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b, so grad_b = -grad_a * (a/b).
Tensor div(const Tensor& a, const Tensor& b) {
  bool need_b = requires_grad(b);
  Tensor out = ops::div(a, b);
  return record("div", {a, b}, out, [b = detach(b), out = need_b ? out : Tensor()](const Tensor& g) {
    Tensor ga = ops::div(g, b);
    return std::vector{ga, out.defined() ? ops::neg(ops::mul(ga, out)) : Tensor()};
  });
}

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum("maximum", a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum("minimum", a, b, false); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return record("where", {cond, a, b}, ops::where(cond, a, b), [cond](const Tensor& g) {
    Tensor zero = zero_scalar(g);
    return std::vector{Tensor(), ops::where(cond, g, zero), ops::where(cond, zero, g)};
  });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  return record("masked_fill", {x, mask}, ops::masked_fill(x, mask, value),
                [mask](const Tensor& g) { return std::vector{ops::masked_fill(g, mask, 0.0), Tensor()}; });
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }

Tensor operator+(const Tensor& a, double s) {
  return record("add_scalar", {a}, ops::add(a, s), [](const Tensor& g) { return std::vector{g}; });
}
Tensor operator-(const Tensor& a, double s) {
  return record("sub_scalar", {a}, ops::sub(a, s), [](const Tensor& g) { return std::vector{g}; });
}
Tensor operator*(const Tensor& a, double s) {
  return record("mul_scalar", {a}, ops::mul(a, s), [s](const Tensor& g) { return std::vector{ops::mul(g, s)}; });
}
Tensor operator/(const Tensor& a, double s) {
  return record("div_scalar", {a}, ops::div(a, s), [s](const Tensor& g) { return std::vector{ops::div(g, s)}; });
}
Tensor operator+(double s, const Tensor& a) { return a + s; }
Tensor operator-(double s, const Tensor& a) {
  return record("rsub_scalar", {a}, ops::rsub(s, a), [](const Tensor& g) { return std::vector{ops::neg(g)}; });
}
Tensor operator*(double s, const Tensor& a) { return a * s; }
// d(s/a)/da = -(s/a)/a.
Tensor operator/(double s, const Tensor& a) {
  Tensor out = ops::rdiv(s, a);
  return record("rdiv_scalar", {a}, out, [a = detach(a), out](const Tensor& g) {
    return std::vector{ops::neg(ops::div(ops::mul(g, out), a))};
  });
}

}  // namespace attn
