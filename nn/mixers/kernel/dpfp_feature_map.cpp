// Deterministic parameter-free projection, DPFP (Schlag, Irie & Schmidhuber 2021, Eq. 31–33;
// docs/models.md §5.5):
//
//   r(x) = [ReLU(x), ReLU(−x)] ∈ ℝ^{2d}
//   φ_ν(x) = concat_{s=1..ν} ( r(x) ⊙ roll(r(x), s) ) ∈ ℝ^{2dν}
//
// roll(·, s) is a cyclic shift by s: roll(r, s)_i = r_{(i−s) mod 2d}. Features are ≥ 0 (and
// can all be 0), so the denominator is guarded by + 1e-6.
#include "nn/mixers/kernel/feature_map.hpp"

namespace attn::nn {
namespace {

class DpfpFeatureMap final : public FeatureMap {
 public:
  explicit DpfpFeatureMap(const FeatureMapOptions& o) : head_dim_(o.head_dim), rolls_(o.dpfp_rolls) {
    ATTN_CHECK(rolls_ >= 1 && rolls_ < 2 * head_dim_, "dpfp feature map: rolls ν = {} must be in [1, 2d − 1 = {}]",
               rolls_, 2 * head_dim_ - 1);
  }
  Tensor queries(const Tensor& q) const override { return features(q); }
  Tensor keys(const Tensor& k) const override { return features(k); }
  int64_t feature_dim() const override { return 2 * head_dim_ * rolls_; }
  DenominatorGuard guard() const override { return {DenominatorGuard::Kind::AddEpsilon, 1e-6}; }

 private:
  Tensor features(const Tensor& x) const {
    const Tensor r = cat({relu(x), relu(-x)}, -1);
    const int64_t width = 2 * head_dim_;
    std::vector<Tensor> parts;
    for (int64_t s = 1; s <= rolls_; ++s) {
      const Tensor rolled = cat({narrow(r, -1, width - s, s), narrow(r, -1, 0, width - s)}, -1);
      parts.push_back(r * rolled);
    }
    return parts.size() == 1 ? parts.front() : cat(parts, -1);
  }

  int64_t head_dim_, rolls_;
};

}  // namespace

std::shared_ptr<FeatureMap> make_dpfp_feature_map(const FeatureMapOptions& o) {
  return std::make_shared<DpfpFeatureMap>(o);
}

}  // namespace attn::nn
