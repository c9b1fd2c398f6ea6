// Dropout (core/ops.hpp): inverted scaling, mask from the counter-based RNG (core/rng.hpp);
// alone, fused with a residual add, and the backward both share.
#include <utility>

#include "core/backend.hpp"
#include "core/ops.hpp"

namespace attn::ops {

namespace {

void check_dropout_input(const char* op, const Tensor& x, double p) {
  ATTN_CHECK(x.defined(), "{}: undefined tensor", op);
  ATTN_CHECK(is_floating(x.dtype()), "{}: needs a floating dtype, got {}", op, dtype_name(x.dtype()));
  ATTN_CHECK(p >= 0.0 && p <= 1.0, "{}: probability {} outside [0, 1]", op, p);
}

// The stream position of the next dropout mask over x: (seed, first counter).
std::pair<uint64_t, uint64_t> reserve_mask(const Tensor& x, Generator* gen) {
  Generator& g = gen != nullptr ? *gen : default_generator();
  const uint64_t seed = g.state().seed;
  return {seed, g.reserve(random_counters(x.numel(), x.dtype()))};
}

DropoutResult empty_result(const Tensor& x) {
  return {empty(x.shape(), x.dtype(), x.device()), empty(x.shape(), DType::Bool, x.device())};
}

}  // namespace

DropoutResult dropout(const Tensor& x, double p, Generator* gen) {
  check_dropout_input("dropout", x, p);
  const auto [seed, first] = reserve_mask(x, gen);
  DropoutResult r = empty_result(x);
  backend_for(x.device()).dropout(x, p, seed, first, r.out, r.mask);
  return r;
}

DropoutResult dropout_add(const Tensor& x, const Tensor& residual, double p, Generator* gen) {
  check_dropout_input("dropout_add", x, p);
  ATTN_CHECK(residual.defined() && residual.shape() == x.shape() && residual.dtype() == x.dtype() &&
                 residual.device() == x.device(),
             "dropout_add: residual {} {} on {} must match the input {} {} on {}",
             residual.defined() ? residual.shape().str() : "undefined",
             residual.defined() ? dtype_name(residual.dtype()) : "", residual.defined() ? residual.device().str() : "",
             x.shape().str(), dtype_name(x.dtype()), x.device().str());
  const auto [seed, first] = reserve_mask(x, gen);
  DropoutResult r = empty_result(x);
  backend_for(x.device()).dropout_add(x, residual, p, seed, first, r.out, r.mask);
  return r;
}

Tensor dropout_backward(const Tensor& dy, const Tensor& mask, double p) {
  check_dropout_input("dropout_backward", dy, p);
  ATTN_CHECK(mask.defined() && mask.dtype() == DType::Bool && mask.shape() == dy.shape() && mask.device() == dy.device(),
             "dropout_backward: the mask must be Bool of the gradient's shape {} on {}, got {} {}", dy.shape().str(),
             dy.device().str(), mask.defined() ? dtype_name(mask.dtype()) : "undefined",
             mask.defined() ? mask.shape().str() : "");
  Tensor dx = empty(dy.shape(), dy.dtype(), dy.device());
  backend_for(dy.device()).dropout_backward(dy, mask, p < 1.0 ? 1.0 / (1.0 - p) : 0.0, dx);  // p = 1 keeps nothing
  return dx;
}

}  // namespace attn::ops
