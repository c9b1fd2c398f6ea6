#include "nn/layers/normalization.hpp"

#include <limits>

#include "nn/layers/layer_norm.hpp"
#include "nn/layers/scale_norm.hpp"

namespace attn::nn {

std::shared_ptr<Normalization> make_normalization(bool scale_norm, int64_t dim) {
  if (scale_norm) return std::make_shared<ScaleNorm>(dim);
  return std::make_shared<LayerNorm>(dim);
}

Tensor unit_rows(const Tensor& x, double eps) {
  return x / clamp(norm(x, {-1}, /*keepdim=*/true), eps, std::numeric_limits<double>::infinity());
}

}  // namespace attn::nn
