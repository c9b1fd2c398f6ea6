#include "nn/mixers/kernel/random_feature_map.hpp"

#include <vector>

namespace attn::nn {

RandomFeatureMap::RandomFeatureMap(const FeatureMapOptions& o)
    : heads_(o.num_heads), redraw_(o.redraw), draw_stream_(o.draw_stream) {
  draws_made_ = register_buffer("random_feature_draws", zeros({1}, DType::Int64), Residence::Host);
}

void RandomFeatureMap::draw_evaluation_matrices() {
  std::vector<Tensor> heads;
  for (int64_t h = 0; h < heads_; ++h) heads.push_back(draw_head(nullptr));
  random_matrices_ = register_buffer("random_matrices", cat(heads, 0));
}

void RandomFeatureMap::start_forward() {
  training_draw_ = Tensor();
  if (!is_training() || !redraw_) return;
  int64_t& draw = draws_made_.data<int64_t>()[0];
  std::vector<Tensor> heads;
  for (int64_t h = 0; h < heads_; ++h) {
    Generator gen = keyed_generator(default_generator().state().seed, {draw_stream_, uint64_t(h), uint64_t(draw)});
    heads.push_back(draw_head(&gen));
  }
  ++draw;
  training_draw_ = cat(heads, 0).to(random_matrices_.device());  // drawn on the host, used where the model is
}

const Tensor& RandomFeatureMap::matrices() const {
  return training_draw_.defined() && is_training() ? training_draw_ : random_matrices_;
}

}  // namespace attn::nn
