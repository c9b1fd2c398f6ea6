// Random feature attention, RFA (Peng et al. 2021, Eq. 2–5; docs/models.md §5.2), per head h:
//
//   x̂ = x / (‖x‖ + 10⁻³)
//   φ(x) = D^{-1/2} · [sin(W_h x̂), cos(W_h x̂)] ∈ ℝ^{2D},   W_h ∈ ℝ^{D×d}, rows ~ N(0, I)
//   E[φ(x)ᵀφ(y)] = exp(−‖x̂ − ŷ‖²/2) ∝ exp(x̂ᵀŷ)
//
// Queries and keys are ℓ2-normalised, so the query's d^{-1/2} cancels and is not applied.
// The evaluation matrices are drawn once, per layer and head, when the model is built and
// saved as the non-trainable `random_matrices` [H, D, d], so any reader of a checkpoint
// reproduces the evaluation model. In training, as the RFA code does, every forward draws
// fresh matrices (unless `--redraw-random-features false`) from the run's counter-based
// generator — the one dropout uses, whose state every checkpoint saves — so a resumed run
// draws exactly what the uninterrupted one did. Features can be negative: the denominator is
// clamped at 0.01 (cross-attention: |D|), as the T2R/RFA code does.
#include <cmath>

#include "nn/layers/init.hpp"
#include "nn/mixers/kernel/feature_map.hpp"

namespace attn::nn {
namespace {

class RfaFeatureMap final : public FeatureMap {
 public:
  explicit RfaFeatureMap(const FeatureMapOptions& o)
      : heads_(o.num_heads), head_dim_(o.head_dim), draws_(o.feature_size), cross_(o.cross_attention),
        redraw_(o.redraw) {
    ATTN_CHECK(draws_ > 0, "rfa feature map: the number of random features must be positive, got {} (--{}-proj-dim)",
               draws_, cross_ ? "cross" : "causal");
    random_matrices_ = register_buffer("random_matrices", init::normal({heads_, draws_, head_dim_}, 1.0));
  }

  void start_forward() override {
    training_draw_ = is_training() && redraw_ ? init::normal({heads_, draws_, head_dim_}, 1.0) : Tensor();
  }
  Tensor queries(const Tensor& q) const override { return features(q); }
  Tensor keys(const Tensor& k) const override { return features(k); }
  int64_t feature_dim() const override { return 2 * draws_; }
  DenominatorGuard guard() const override {
    return {cross_ ? DenominatorGuard::Kind::ClampAbsolute : DenominatorGuard::Kind::ClampBelow, 0.01};
  }

 private:
  // x [B, H, T, d] -> [B, H, T, 2D]
  Tensor features(const Tensor& x) const {
    const Tensor unit = x / (norm(x, {-1}, true) + 1e-3);
    const Tensor& w = training_draw_.defined() && is_training() ? training_draw_ : random_matrices_;
    const Tensor projected = matmul(unit, transpose(w.to(x.dtype()), 1, 2));  // [B, H, T, D]
    return cat({sin(projected), cos(projected)}, -1) * (1.0 / std::sqrt(double(draws_)));
  }

  int64_t heads_, head_dim_, draws_;
  bool cross_, redraw_;
  Tensor random_matrices_;
  Tensor training_draw_;  // this training forward's matrices (undefined: use random_matrices_)
};

}  // namespace

std::shared_ptr<FeatureMap> make_rfa_feature_map(const FeatureMapOptions& o) {
  return std::make_shared<RfaFeatureMap>(o);
}

}  // namespace attn::nn
