// Several linear maps of the same input as one product: y = x [W_1; W_2; …]ᵀ + [b_1; b_2; …],
// split back into y_1, y_2, … (views). Decoding uses it for the few rows of a step, where
// reading three D×D weights in one GEMM call instead of three saves a third of the calls'
// fixed cost (attention's q/k/v projections, T2R's folded feature projections). The stacked
// weight is a copy made when decoding starts: it does not follow later training updates.
#pragma once
#include <vector>

#include "nn/layers/linear.hpp"

namespace attn::nn {

class StackedLinear {
 public:
  StackedLinear() = default;
  // Weights [out_i, in] (same in) and biases [out_i] (every map has one, or none has).
  StackedLinear(const std::vector<Tensor>& weights, const std::vector<Tensor>& biases);
  bool defined() const { return weight_.defined(); }
  // x [..., in] -> one [..., out_i] view per map.
  std::vector<Tensor> forward(const Tensor& x) const;

 private:
  Tensor weight_, bias_;
  std::vector<int64_t> widths_;
};

}  // namespace attn::nn
