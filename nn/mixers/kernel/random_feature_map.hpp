// What the random-feature maps (RFA, Performer; docs/models.md §5.2–§5.3) share: their draws.
//
// * Evaluation: one draw per head, made when the model is built, saved as the non-trainable
//   buffer `random_matrices` [H, D, d], so any reader of a checkpoint has the evaluation model
//   (`attnlab average` copies it rather than averaging it).
// * Training (unless `--redraw-random-features false`): every forward draws fresh matrices.
//   Head h's n-th draw comes from a Philox stream keyed by (run seed, mixer, h, n), where the
//   mixer key names the place and layer (nn::KernelOptions::draw_stream) and n counts the
//   draws so far; n is saved as the buffer `random_feature_draws`, so a resumed run draws
//   what the uninterrupted one did, and the draws depend on nothing else the run does
//   (dropout, batch shapes, thread count).
#pragma once
#include <cstdint>

#include "core/rng.hpp"
#include "nn/mixers/kernel/feature_map.hpp"

namespace attn::nn {

class RandomFeatureMap : public FeatureMap {
 public:
  void start_forward() final;

 protected:
  explicit RandomFeatureMap(const FeatureMapOptions& o);
  // Called once by the derived constructor: makes the evaluation draw.
  void draw_evaluation_matrices();
  // One head's matrix [1, D, d] from `gen` (null: the default generator).
  virtual Tensor draw_head(Generator* gen) const = 0;
  // The matrices [H, D, d] of this forward: the training draw in training, else the saved ones.
  const Tensor& matrices() const;

  int64_t heads_;

 private:
  bool redraw_;
  uint64_t draw_stream_;
  Tensor random_matrices_;
  Tensor draws_made_;     // [1] int64: training draws so far (saved as random_feature_draws)
  Tensor training_draw_;  // this training forward's matrices (undefined: use random_matrices_)
};

}  // namespace attn::nn
