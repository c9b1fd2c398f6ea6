// The normalisation of a residual block and of the stacks' outputs (docs/models.md §1.4):
// fairseq's LayerNorm, or ScaleNorm (docs/models.md §1.4.1) when the model's `scale_norm`
// switch is on. Also the unit-length rows of FixNorm (§1.4.1).
#pragma once
#include <memory>

#include "nn/module.hpp"

namespace attn::nn {

class Normalization : public Module {
 public:
  virtual Tensor forward(const Tensor& x) const = 0;
};

// ScaleNorm when `scale_norm`, LayerNorm otherwise, over the last dim of width `dim`.
std::shared_ptr<Normalization> make_normalization(bool scale_norm, int64_t dim);

// x / max(‖x‖, ε) along the last dim: every row at unit length, a zero row (padding) kept zero.
Tensor unit_rows(const Tensor& x, double eps = 1e-5);

}  // namespace attn::nn
