// The shared projections and head handling of attention mixers. See multi_head_mixer.hpp.
#include "nn/mixers/multi_head_mixer.hpp"

#include <cmath>

namespace attn::nn {

MultiHeadMixer::MultiHeadMixer(const MixerOptions& o, const char* name)
    : embed_dim_(o.embed_dim),
      num_heads_(o.num_heads),
      head_dim_(o.num_heads > 0 ? o.embed_dim / o.num_heads : 0),
      attention_dropout_(o.attention_dropout),
      cross_attention_(o.cross_attention) {
  ATTN_CHECK(o.embed_dim > 0 && o.num_heads > 0 && o.embed_dim % o.num_heads == 0,
             "{}: embed_dim {} must be a positive multiple of num_heads {}", name, o.embed_dim, o.num_heads);
  const double qkv_gain = 1.0 / std::sqrt(2.0);
  auto projection = [&](double gain) {
    return std::make_shared<Linear>(embed_dim_, embed_dim_, true, LinearInit::Xavier, gain);
  };
  q_proj = register_module("q_proj", projection(qkv_gain));
  k_proj = register_module("k_proj", projection(qkv_gain));
  v_proj = register_module("v_proj", projection(qkv_gain));
  out_proj = register_module("out_proj", projection(1.0));
}

Tensor MultiHeadMixer::split_heads(const Tensor& x) const {
  return permute(view(x, {x.size(0), x.size(1), num_heads_, head_dim_}), {0, 2, 1, 3});
}

Tensor MultiHeadMixer::merge_heads_and_project(const Tensor& heads) const {
  const int64_t batch = heads.size(0), length = heads.size(2);
  return out_proj->forward(reshape(permute(heads, {0, 2, 1, 3}), {batch, length, embed_dim_}));
}

AttentionOptions MultiHeadMixer::attention_options(const Tensor* weights) const {
  AttentionOptions options;
  options.scale = 1.0 / std::sqrt(double(head_dim_));
  options.dropout = attention_dropout_;
  options.training = is_training();
  options.return_probabilities = weights != nullptr;
  return options;
}

}  // namespace attn::nn
