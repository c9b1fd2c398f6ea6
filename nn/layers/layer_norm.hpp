// LayerNorm over the last dim with affine parameters, ε = 1e-5 (docs/models.md §1.4).
#pragma once
#include "nn/layers/normalization.hpp"

namespace attn::nn {

class LayerNorm : public Normalization {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5);
  Tensor forward(const Tensor& x) const override { return layer_norm(x, weight, bias, eps); }

  Tensor weight;  // γ [D], ones
  Tensor bias;    // β [D], zeros
  double eps;
};

}  // namespace attn::nn
