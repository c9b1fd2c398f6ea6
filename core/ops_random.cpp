// Dropout (core/ops.hpp): inverted scaling, mask from the counter-based RNG (core/rng.hpp).
#include "core/ops.hpp"

namespace attn::ops {

DropoutResult dropout(const Tensor& x, double p, Generator* gen) {
  ATTN_CHECK(x.defined(), "dropout: undefined tensor");
  ATTN_CHECK(is_floating(x.dtype()), "dropout: needs a floating dtype, got {}", dtype_name(x.dtype()));
  ATTN_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability {} outside [0, 1]", p);
  Generator& g = gen != nullptr ? *gen : default_generator();
  const uint64_t seed = g.state().seed, first = g.reserve(random_counters(x.numel(), x.dtype()));
  DropoutResult r{empty(x.shape(), x.dtype(), x.device()), empty(x.shape(), DType::Bool, x.device())};
  backend_for(x.device()).dropout(x, p, seed, first, r.out, r.mask);
  return r;
}

}  // namespace attn::ops
