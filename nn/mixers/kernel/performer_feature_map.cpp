// Performer's positive orthogonal random features, FAVOR+ (Choromanski et al. 2021, Lemma 1
// and §2.4; docs/models.md §5.3), per head with Ω ∈ ℝ^{m×d}:
//
//   x' = d^{−1/4} x          (so that q'ᵀk' = qᵀk / √d)
//   φ(x') = m^{−1/2} · exp(Ω x' − ‖x'‖²/2 − c)          E[φ(q')ᵀφ(k')] ∝ exp(q'ᵀk')
//
// Ω: ⌈m/d⌉ blocks of d orthonormal rows (QR of a Gaussian matrix), each row rescaled by the
// norm of a fresh N(0, I_d) draw; drawn as random_feature_map.hpp says: saved for evaluation
// as `random_matrices` [H, m, d], redrawn at every training forward (the paper's feature
// redrawing, §4).
//
// The shift c keeps exp from overflowing and cancels between numerator and denominator:
// * queries: their own maximum over features, plus 10⁻⁴ inside the bracket (as the reference
//   code) — a per-row factor that uses nothing from other positions; because of the 10⁻⁴ it
//   does not cancel exactly, so it is differentiated like the rest;
// * keys, non-causal: the maximum of Ω k' over every position and feature of the sentence;
// * keys, causal: a running maximum c_t = max(c_{t−1}, max_features Ω k'_t) — the same
//   quantity over positions ≤ t only, so the causal form is exact and equal in training and
//   decoding. When c grows the state is rescaled by a_t = exp(c_{t−1} − c_t), which the rule's
//   scan applies as a value gate. Keys get no 10⁻⁴, so c cancels exactly and needs no gradient
//   (up to the denominator's + 10⁻⁶ guard, which does not scale with c: the causal form and a
//   globally shifted quadratic form differ by ~10⁻⁷ relative).
#include <cmath>
#include <limits>

#include "core/cpu/eigen.hpp"
#include "nn/layers/init.hpp"
#include "nn/mixers/kernel/random_feature_map.hpp"

#include <Eigen/QR>  // after core/cpu/eigen.hpp

namespace attn::nn {
namespace {

// [1, m, d]: one head's ⌈m/d⌉ orthonormal blocks, rows scaled by χ_d-distributed norms.
Tensor orthogonal_random_features(int64_t features, int64_t dim, Generator* gen) {
  const int64_t blocks = (features + dim - 1) / dim;
  const std::vector<double> gaussian = init::normal({blocks, dim, dim}, 1.0, gen).to_vector();
  const std::vector<double> norms_from = init::normal({features, dim}, 1.0, gen).to_vector();
  std::vector<double> omega(size_t(features * dim));
  for (int64_t b = 0; b < blocks; ++b) {
    Eigen::MatrixXd g(dim, dim);
    for (int64_t i = 0; i < dim; ++i)
      for (int64_t j = 0; j < dim; ++j) g(i, j) = gaussian[size_t((b * dim + i) * dim + j)];
    const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ();
    for (int64_t i = 0; i < dim && b * dim + i < features; ++i) {
      const int64_t row = b * dim + i;
      double norm = 0;
      for (int64_t j = 0; j < dim; ++j) norm += std::pow(norms_from[size_t(row * dim + j)], 2);
      for (int64_t j = 0; j < dim; ++j) omega[size_t(row * dim + j)] = q(j, i) * std::sqrt(norm);
    }
  }
  return from_doubles(omega, {1, features, dim}, DType::Float32);
}

class PerformerFeatureMap final : public RandomFeatureMap {
 public:
  explicit PerformerFeatureMap(const FeatureMapOptions& o)
      : RandomFeatureMap(o), head_dim_(o.head_dim), features_(o.feature_size) {
    ATTN_CHECK(features_ > 0, "performer feature map: the number of random features must be positive, got {} (--{}-proj-dim)",
               features_, o.cross_attention ? "cross" : "causal");
    draw_evaluation_matrices();
  }

  Tensor queries(const Tensor& q) const override {
    const Tensor u = exponent(q);
    return (exp(u - amax(u, {-1}, true)) + 1e-4) * scale();  // the shift does not cancel against 10⁻⁴: differentiated
  }
  Tensor keys(const Tensor& k) const override {
    const Tensor u = exponent(k);
    return exp(u - detach(amax(u, {-2, -1}, true))) * scale();
  }
  CausalKeys causal_keys(const Tensor& k, Tensor& shift) const override {
    const Tensor u = exponent(k);
    const RunningMax running = running_max(detach(amax(u, {-1}, true)), shift);
    shift = running.last;
    return {exp(u - running.values) * scale(), running.decay};
  }
  int64_t feature_dim() const override { return features_; }
  DenominatorGuard guard() const override { return {DenominatorGuard::Kind::AddEpsilon, 1e-6}; }

 private:
  double scale() const { return 1.0 / std::sqrt(double(features_)); }

  // Ω x' − ‖x'‖²/2 with x' = d^{−1/4} x: [B, H, T, d] -> [B, H, T, m]
  Tensor exponent(const Tensor& x) const {
    const Tensor scaled = x * std::pow(double(head_dim_), -0.25);
    const Tensor projected = matmul(scaled, transpose(matrices().to(x.dtype()), 1, 2));
    return projected - sum(scaled * scaled, {-1}, true) * 0.5;
  }

  struct RunningMax {
    Tensor values, decay, last;  // c_t [B, H, T, 1]; exp(c_{t−1} − c_t) likewise; c_{T−1} [B, H, 1, 1]
  };
  // c_t = max(c_{t−1}, row_max_t) from c_{−1} = `previous` (undefined: −∞), on the tensors'
  // device: prefix maxima by doubling (after step k each c_t covers 2^k positions), log₂ T
  // element-wise maxima, exact, and no read-back to the host.
  static RunningMax running_max(const Tensor& row_max, const Tensor& previous) {
    const int64_t length = row_max.size(2);
    const Shape one_step{row_max.size(0), row_max.size(1), 1, 1};
    const Tensor start = previous.defined() ? previous
                                            : full(one_step, -std::numeric_limits<double>::infinity(),
                                                   row_max.dtype(), row_max.device());
    Tensor c = ops::maximum(row_max, start);
    for (int64_t span = 1; span < length; span *= 2) {
      const Tensor padding = start.expand({one_step[0], one_step[1], span, 1});
      c = ops::maximum(c, ops::cat({padding, c.narrow(2, 0, length - span)}, 2));
    }
    const Tensor before = ops::cat({start, c.narrow(2, 0, length - 1)}, 2);  // c_{t−1}
    return {c, ops::exp(ops::sub(before, c)), c.narrow(2, length - 1, 1).contiguous()};
  }

  Tensor draw_head(Generator* gen) const override { return orthogonal_random_features(features_, head_dim_, gen); }

  int64_t head_dim_, features_;
};

}  // namespace

std::shared_ptr<FeatureMap> make_performer_feature_map(const FeatureMapOptions& o) {
  return std::make_shared<PerformerFeatureMap>(o);
}

}  // namespace attn::nn
