// ScaleNorm (Nguyen & Salazar 2019; docs/models.md §1.4.1): x ↦ g · x / max(‖x‖, ε) over the
// last dim, with a single learned scalar g initialised to √D and ε = 1e-5. It keeps only
// LayerNorm's rescaling: no centring, no per-channel gain or bias.
#pragma once
#include "nn/layers/normalization.hpp"

namespace attn::nn {

class ScaleNorm : public Normalization {
 public:
  explicit ScaleNorm(int64_t dim, double eps = 1e-5);
  Tensor forward(const Tensor& x) const override { return unit_rows(x, eps) * scale; }

  Tensor scale;  // g [1], √D
  double eps;
};

}  // namespace attn::nn
