// Linear layer y = x Wᵀ + b with W [out, in] (fairseq/PyTorch layout, docs/models.md §1.4).
#pragma once
#include "nn/module.hpp"

namespace attn::nn {

enum class LinearInit {
  Xavier,         // Xavier-uniform weight (gain configurable), zero bias: fairseq 2018–2019
  TorchDefault,   // kaiming_uniform(a=√5) weight, uniform bias: fairseq after April 2020
};

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, LinearInit init = LinearInit::Xavier,
         double xavier_gain = 1.0);
  Tensor forward(const Tensor& x) const { return linear(x, weight, bias); }
  // relu(forward(x)), with the bias add and the ReLU fused (autograd/ops.hpp linear_relu).
  Tensor forward_relu(const Tensor& x) const { return linear_relu(x, weight, bias); }

  Tensor weight;  // [out, in]
  Tensor bias;    // [out] or undefined
};

}  // namespace attn::nn
