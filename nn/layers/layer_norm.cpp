#include "nn/layers/layer_norm.hpp"

namespace attn::nn {

LayerNorm::LayerNorm(int64_t dim, double eps_) : eps(eps_) {
  weight = register_parameter("weight", ones({dim}));
  bias = register_parameter("bias", zeros({dim}));
}

}  // namespace attn::nn
