// Random feature attention, RFA (Peng et al. 2021, Eq. 2–5; docs/models.md §5.2), per head h:
//
//   x̂ = x / (‖x‖ + 10⁻³)
//   φ(x) = D^{-1/2} · [sin(W_h x̂), cos(W_h x̂)] ∈ ℝ^{2D},   W_h ∈ ℝ^{D×d}, rows ~ N(0, I)
//   E[φ(x)ᵀφ(y)] = exp(−‖x̂ − ŷ‖²/2) ∝ exp(x̂ᵀŷ)
//
// Queries and keys are ℓ2-normalised, so the query's d^{-1/2} cancels and is not applied.
// W is drawn as random_feature_map.hpp says: saved for evaluation as `random_matrices`
// [H, D, d], redrawn at every training forward as the RFA code does. Features can be
// negative: the denominator is clamped at 0.01 (cross-attention: |D|), as the T2R/RFA code does.
#include <cmath>

#include "nn/layers/init.hpp"
#include "nn/mixers/kernel/random_feature_map.hpp"

namespace attn::nn {
namespace {

class RfaFeatureMap final : public RandomFeatureMap {
 public:
  explicit RfaFeatureMap(const FeatureMapOptions& o)
      : RandomFeatureMap(o), head_dim_(o.head_dim), draws_(o.feature_size), cross_(o.cross_attention) {
    ATTN_CHECK(draws_ > 0, "rfa feature map: the number of random features must be positive, got {} (--{}-proj-dim)",
               draws_, cross_ ? "cross" : "causal");
    draw_evaluation_matrices();
  }

  Tensor queries(const Tensor& q) const override { return features(q); }
  Tensor keys(const Tensor& k) const override { return features(k); }
  int64_t feature_dim() const override { return 2 * draws_; }
  DenominatorGuard guard() const override {
    return {cross_ ? DenominatorGuard::Kind::ClampAbsolute : DenominatorGuard::Kind::ClampBelow, 0.01};
  }

 private:
  // W_h, rows ~ N(0, I): [1, D, d]
  Tensor draw_head(Generator* gen) const override { return init::normal({1, draws_, head_dim_}, 1.0, gen); }

  // x [B, H, T, d] -> [B, H, T, 2D]
  Tensor features(const Tensor& x) const {
    const Tensor unit = x / (norm(x, {-1}, true) + 1e-3);
    const Tensor projected = matmul(unit, transpose(matrices().to(x.dtype()), 1, 2));  // [B, H, T, D]
    return cat({sin(projected), cos(projected)}, -1) * (1.0 / std::sqrt(double(draws_)));
  }

  int64_t head_dim_, draws_;
  bool cross_;
};

}  // namespace

std::shared_ptr<FeatureMap> make_rfa_feature_map(const FeatureMapOptions& o) {
  return std::make_shared<RfaFeatureMap>(o);
}

}  // namespace attn::nn
