// One product for several linear maps of the same input. See stacked_linear.hpp.
#include "nn/layers/stacked_linear.hpp"

namespace attn::nn {

StackedLinear::StackedLinear(const std::vector<Tensor>& weights, const std::vector<Tensor>& biases) {
  ATTN_CHECK(!weights.empty() && weights.size() == biases.size(), "StackedLinear: {} weights but {} biases",
             weights.size(), biases.size());
  std::vector<Tensor> w, b;
  for (size_t i = 0; i < weights.size(); ++i) {
    w.push_back(detach(weights[i]));
    if (biases[i].defined()) b.push_back(detach(biases[i]));
    widths_.push_back(weights[i].size(0));
  }
  ATTN_CHECK(b.empty() || b.size() == w.size(), "StackedLinear: every map needs a bias, or none");
  weight_ = ops::cat(w, 0);
  if (!b.empty()) bias_ = ops::cat(b, 0);
}

std::vector<Tensor> StackedLinear::forward(const Tensor& x) const {
  const Tensor y = linear(x, weight_, bias_);
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t width : widths_) {
    parts.push_back(narrow(y, -1, start, width));
    start += width;
  }
  return parts;
}

}  // namespace attn::nn
