// Feature maps φ of kernelized attention (docs/models.md §5): attention exp(qᵀk) replaced by
// φ(q)ᵀφ(k), so that a sum over keys becomes a state S = Σ_j v_j φ(k_j)ᵀ (§5.0). A map acts per
// head on projected queries and keys [B, H, T, d] and returns features [B, H, T, m].
//
// Maps (each in its own file, with its paper's equations):
//   identity   φ(x) = x, m = d (the decay rule's keys and queries, §5.6)
//   elu        φ(x) = elu(x) + 1, m = d (Katharopoulos et al. 2020, §5.1)
//   t2r        φ(x) = ReLU(W_φ x + b_φ), learned, m = feature size (Kasai et al. 2021, §5.4)
//   rfa        φ(x) = D^{-1/2}[sin(W x̂), cos(W x̂)], x̂ = x/‖x‖, m = 2·feature size (Peng et al. 2021, §5.2)
//   dpfp       φ_ν(x) = concat_s r(x) ⊙ roll(r(x), s), r(x) = [ReLU(x), ReLU(−x)], m = 2dν (Schlag et al. 2021, §5.5)
//   performer  φ(x) = m^{-1/2} exp(Ω x' − ‖x'‖²/2 − c), x' = d^{-1/4} x, orthogonal Ω (Choromanski et al. 2021, §5.3)
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/layers/linear.hpp"

namespace attn::nn {

// How a normalised rule keeps its denominator D = zᵀφ(q) away from 0 (docs/models.md §5.0's
// table): D + ε (fast-transformers), max(D, ε) or max(|D|, ε) (the T2R code, causal and cross).
// A clamp passes no gradient while it is active.
struct DenominatorGuard {
  enum class Kind { AddEpsilon, ClampBelow, ClampAbsolute } kind = Kind::AddEpsilon;
  double epsilon = 1e-6;
  Tensor apply(const Tensor& denominator) const;
};

struct FeatureMapOptions {
  std::string name;          // identity | elu | t2r | rfa | dpfp | performer
  int64_t num_heads = 1;     // H
  int64_t head_dim = 1;      // d
  int64_t feature_size = 0;  // t2r, performer: m; rfa: D (φ has 2D dims); others: unused
  int64_t dpfp_rolls = 2;    // dpfp: ν
  bool cross_attention = false;
  bool redraw = true;        // rfa, performer: fresh random features at every training forward
  uint64_t draw_stream = 0;  // rfa, performer: the key of this mixer's training draws (random_feature_map.hpp)
};

class FeatureMap : public Module {
 public:
  // q [B, H, T, d] as projected (W_q x + b_q, unscaled) -> φ(q) [B, H, T, m].
  virtual Tensor queries(const Tensor& q) const = 0;
  // k [B, H, T, d] -> φ(k) [B, H, T, m] (every key sees every other: non-causal forms).
  virtual Tensor keys(const Tensor& k) const = 0;
  // Keys of the causal forms. A map whose keys carry a running stabiliser (Performer) also
  // returns the decay a_t [B, H, T, 1] by which the state is rescaled when the stabiliser
  // grows; `shift` [B, H, 1, 1] carries it from call to call (decoding; undefined at the start).
  struct CausalKeys {
    Tensor phi, decay;  // decay undefined: none
  };
  virtual CausalKeys causal_keys(const Tensor& k, Tensor& /*shift*/) const { return {keys(k), {}}; }
  virtual int64_t feature_dim() const = 0;  // m
  virtual DenominatorGuard guard() const = 0;

  // Called once at the start of every forward over whole sequences, before queries() and
  // keys(): maps with random features redraw them here in training (RFA, Performer).
  virtual void start_forward() {}

  // A map of the form φ(x) = ReLU(W_φ x + b_φ) folds the projection before it (T2R, Eq. 8):
  // φ(W x + c) = ReLU(W̃ x + b̃) per head, with W̃ = W_φ W and b̃ = b_φ + W_φ c (queries also
  // carry their scaling). Given the projection's weight [H·d, D] and bias [H·d], returns W̃
  // [H·m, D] and b̃ [H·m]; undefined tensors when the map cannot fold.
  struct Folded {
    Tensor weight, bias;
  };
  virtual Folded fold(const Tensor& weight, const Tensor& bias, bool query) const;

  // The map's learned projection (T2R's fc3 / fc4), or null for maps without parameters.
  virtual std::shared_ptr<Linear> projection() const { return nullptr; }
};

// False when a map's features are not kernel features (identity: D = zᵀφ(q) has no sign and no
// meaning), so only rules without a normaliser may take it. Throws listing the known maps.
bool feature_map_is_normalisable(const std::string& name);

// Builds the map `options.name`; throws listing the known maps.
std::shared_ptr<FeatureMap> make_feature_map(const FeatureMapOptions& options);
const std::vector<std::string>& feature_map_names();

// The maps, one per file (kernel/<name>_feature_map.cpp).
std::shared_ptr<FeatureMap> make_identity_feature_map(const FeatureMapOptions& options);
std::shared_ptr<FeatureMap> make_elu_feature_map(const FeatureMapOptions& options);
std::shared_ptr<FeatureMap> make_t2r_feature_map(const FeatureMapOptions& options);
std::shared_ptr<FeatureMap> make_rfa_feature_map(const FeatureMapOptions& options);
std::shared_ptr<FeatureMap> make_dpfp_feature_map(const FeatureMapOptions& options);
std::shared_ptr<FeatureMap> make_performer_feature_map(const FeatureMapOptions& options);

}  // namespace attn::nn
