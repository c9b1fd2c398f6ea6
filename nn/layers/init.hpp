// Parameter initialisers (docs/models.md §1.2, §1.4): every draw comes from the seeded
// counter-based generator, so a seed fixes the initial model.
#pragma once
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn::nn::init {

// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) for a [fan_out, fan_in, ...] weight
// (trailing dims multiply both fans, as for a conv kernel).
Tensor xavier_uniform(const Shape& shape, double gain = 1.0, Generator* gen = nullptr);
// PyTorch's default nn.Linear weight init: kaiming_uniform(a = sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
Tensor kaiming_uniform_default(const Shape& shape, Generator* gen = nullptr);
// PyTorch's default nn.Linear bias init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
Tensor linear_bias_default(int64_t out_features, int64_t fan_in, Generator* gen = nullptr);
// N(0, std^2).
Tensor normal(const Shape& shape, double stddev, Generator* gen = nullptr);

}  // namespace attn::nn::init
