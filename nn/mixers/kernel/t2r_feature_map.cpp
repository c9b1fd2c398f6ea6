// T2R's learned feature map (Kasai et al. 2021, Eq. 5 and 8; docs/models.md §5.4), per head h:
//
//   φ(x) = ReLU(W_φ,h x + b_φ,h),    W_φ,h ∈ ℝ^{m×d},  b_φ,h ∈ ℝ^m
//
// one map per head shared by its queries and keys; queries are scaled by d^{-1/2} before φ,
// keys are not. Stored as the T2R code stores it: one Linear(d → H·m) per attention module,
// `fc3` for self-attention and `fc4` for cross-attention, with PyTorch's default init. The
// denominator is clamped at 0.01 (cross-attention: |D| clamped at 0.01), as the T2R code does.
//
// Folding (Eq. 8): since φ follows the projection q = W_q x + b_q,
//   φ(q) = ReLU(W̃_q x + b̃_q),  W̃_q = d^{-1/2} W_φ W_q,  b̃_q = b_φ + d^{-1/2} W_φ b_q
// (keys without the d^{-1/2}), so decoding computes φ(q) with one m×D product per head.
#include <cmath>

#include "nn/mixers/kernel/feature_map.hpp"

namespace attn::nn {
namespace {

class T2rFeatureMap final : public FeatureMap {
 public:
  explicit T2rFeatureMap(const FeatureMapOptions& o)
      : heads_(o.num_heads), head_dim_(o.head_dim), features_(o.feature_size), cross_(o.cross_attention) {
    ATTN_CHECK(features_ > 0, "t2r feature map: the feature size must be positive, got {} (--{}-proj-dim)", features_,
               cross_ ? "cross" : "causal");
    fc_ = register_module(cross_ ? "fc4" : "fc3",
                          std::make_shared<Linear>(head_dim_, heads_ * features_, true, LinearInit::TorchDefault));
  }

  Tensor queries(const Tensor& q) const override { return features(q * query_scale()); }
  Tensor keys(const Tensor& k) const override { return features(k); }
  int64_t feature_dim() const override { return features_; }
  DenominatorGuard guard() const override {
    return {cross_ ? DenominatorGuard::Kind::ClampAbsolute : DenominatorGuard::Kind::ClampBelow, 0.01};
  }

  Folded fold(const Tensor& weight, const Tensor& bias, bool query) const override {
    const double scale = query ? query_scale() : 1.0;
    const int64_t in = weight.size(1);
    const Tensor w_phi = detach(fc_->weight).reshape({heads_, features_, head_dim_});
    const Tensor w = matmul(w_phi, detach(weight).reshape({heads_, head_dim_, in})) * scale;  // [H, m, D]
    const Tensor c = matmul(w_phi, detach(bias).reshape({heads_, head_dim_, 1})) * scale;     // [H, m, 1]
    return {w.reshape({heads_ * features_, in}), detach(fc_->bias) + c.reshape({heads_ * features_})};
  }

  std::shared_ptr<Linear> projection() const override { return fc_; }

 private:
  double query_scale() const { return 1.0 / std::sqrt(double(head_dim_)); }

  // x [B, H, T, d] -> ReLU(x W_φ,hᵀ + b_φ,h) [B, H, T, m]
  Tensor features(const Tensor& x) const {
    const Tensor w = transpose(reshape(fc_->weight, {heads_, features_, head_dim_}), 1, 2);  // [H, d, m]
    return relu(matmul(x, w) + reshape(fc_->bias, {heads_, 1, features_}));
  }

  int64_t heads_, head_dim_, features_;
  bool cross_;
  std::shared_ptr<Linear> fc_;
};

}  // namespace

std::shared_ptr<FeatureMap> make_t2r_feature_map(const FeatureMapOptions& o) {
  return std::make_shared<T2rFeatureMap>(o);
}

}  // namespace attn::nn
