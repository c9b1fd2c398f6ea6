// ELU+1 linear attention (Katharopoulos et al. 2020, Eq. 7; docs/models.md §5.1):
//
//   φ(x) = elu(x) + 1  (x + 1 for x > 0, eˣ otherwise),   m = d
//
// positive everywhere, no d^{-1/2} inside φ (as fast-transformers' elu_feature_map), and the
// denominator guarded by + 1e-6.
#include "nn/mixers/kernel/feature_map.hpp"

namespace attn::nn {
namespace {

class EluFeatureMap final : public FeatureMap {
 public:
  explicit EluFeatureMap(const FeatureMapOptions& o) : head_dim_(o.head_dim) {}
  Tensor queries(const Tensor& q) const override { return elu(q) + 1.0; }
  Tensor keys(const Tensor& k) const override { return elu(k) + 1.0; }
  int64_t feature_dim() const override { return head_dim_; }
  DenominatorGuard guard() const override { return {DenominatorGuard::Kind::AddEpsilon, 1e-6}; }

 private:
  int64_t head_dim_;
};

}  // namespace

std::shared_ptr<FeatureMap> make_elu_feature_map(const FeatureMapOptions& o) {
  return std::make_shared<EluFeatureMap>(o);
}

}  // namespace attn::nn
