#include "nn/layers/init.hpp"

#include <cmath>

namespace attn::nn::init {

Tensor xavier_uniform(const Shape& shape, double gain, Generator* gen) {
  ATTN_CHECK(shape.size() >= 2, "xavier_uniform expects a weight of 2 or more dims, got {}", shape.str());
  // fan_in = dim 1 × receptive field, fan_out = dim 0 × receptive field (PyTorch's convention;
  // a conv weight [H, 1, K] has fans K and H·K).
  const double receptive = double(shape.numel() / (shape[0] * shape[1]));
  const double a = gain * std::sqrt(6.0 / (double(shape[0] + shape[1]) * receptive));
  return uniform(shape, -a, a, DType::Float32, gen);
}

Tensor kaiming_uniform_default(const Shape& shape, Generator* gen) {
  ATTN_CHECK(shape.size() == 2, "kaiming_uniform expects a 2-D weight, got {}", shape.str());
  double bound = 1.0 / std::sqrt(double(shape[1]));
  return uniform(shape, -bound, bound, DType::Float32, gen);
}

Tensor linear_bias_default(int64_t out_features, int64_t fan_in, Generator* gen) {
  double bound = 1.0 / std::sqrt(double(fan_in));
  return uniform({out_features}, -bound, bound, DType::Float32, gen);
}

Tensor normal(const Shape& shape, double stddev, Generator* gen) {
  return attn::normal(shape, 0.0, stddev, DType::Float32, gen);
}

}  // namespace attn::nn::init
