// Token embedding E [V, D] drawn from N(0, 1/D) with the padding row zeroed
// (docs/models.md §1.2). The √D scale is applied by the model, not here.
#pragma once
#include "nn/module.hpp"

namespace attn::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, int64_t padding_idx);
  // ids int64 [...] -> [..., D]; the padding row receives no gradient.
  Tensor forward(const Tensor& ids) const { return embedding(weight, ids, padding_idx); }

  Tensor weight;  // [V, D]
  int64_t padding_idx;
};

}  // namespace attn::nn
