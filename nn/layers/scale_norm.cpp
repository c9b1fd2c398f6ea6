#include "nn/layers/scale_norm.hpp"

#include <cmath>

namespace attn::nn {

ScaleNorm::ScaleNorm(int64_t dim, double eps_) : eps(eps_) {
  scale = register_parameter("scale", full({1}, std::sqrt(double(dim))));
}

}  // namespace attn::nn
