#include "nn/layers/embedding.hpp"

#include <cmath>

#include "nn/layers/init.hpp"

namespace attn::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t dim, int64_t pad, bool fix_norm_)
    : padding_idx(pad), fix_norm(fix_norm_) {
  Tensor w = init::normal({num_embeddings, dim}, 1.0 / std::sqrt(double(dim)));
  if (pad >= 0 && pad < num_embeddings) w.select(0, pad).zero_();
  weight = register_parameter("weight", w);
}

}  // namespace attn::nn
