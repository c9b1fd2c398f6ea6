// Token embedding E [V, D] drawn from N(0, 1/D) with the padding row zeroed
// (docs/models.md §1.2). The √D scale is applied by the model, not here. With `fix_norm`
// (FixNorm, §1.4.1) every looked-up row is scaled to unit length.
#pragma once
#include "nn/layers/normalization.hpp"

namespace attn::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, int64_t padding_idx, bool fix_norm = false);
  // ids int64 [...] -> [..., D]; the padding row receives no gradient.
  Tensor forward(const Tensor& ids) const {
    Tensor rows = embedding(weight, ids, padding_idx);
    return fix_norm ? unit_rows(rows) : rows;
  }

  Tensor weight;  // [V, D]
  int64_t padding_idx;
  bool fix_norm;
};

}  // namespace attn::nn
