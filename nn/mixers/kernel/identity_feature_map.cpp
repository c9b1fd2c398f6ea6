// The identity feature map: φ(x) = x, m = d. The decaying fast weights of Mao (2022) use the
// projected keys and queries themselves (docs/models.md §5.6: "no feature map"). Queries are
// scaled by d^{-1/2} as softmax attention scales them, so a layer swapped in for softmax
// attention starts from the teacher's logit scale. Features can be negative: only rules
// without a normaliser (decay) take this map.
#include <cmath>

#include "nn/mixers/kernel/feature_map.hpp"

namespace attn::nn {
namespace {

class IdentityFeatureMap final : public FeatureMap {
 public:
  explicit IdentityFeatureMap(const FeatureMapOptions& o) : head_dim_(o.head_dim) {}
  Tensor queries(const Tensor& q) const override { return q * (1.0 / std::sqrt(double(head_dim_))); }
  Tensor keys(const Tensor& k) const override { return k; }
  int64_t feature_dim() const override { return head_dim_; }
  DenominatorGuard guard() const override { return {}; }

 private:
  int64_t head_dim_;
};

}  // namespace

std::shared_ptr<FeatureMap> make_identity_feature_map(const FeatureMapOptions& o) {
  return std::make_shared<IdentityFeatureMap>(o);
}

}  // namespace attn::nn
