#include "nn/layers/lexical_model.hpp"

namespace attn::nn {

LexicalModel::LexicalModel(int64_t dim) : proj(register_module("proj", std::make_shared<Linear>(dim, dim, false))) {
  proj->weight.data_only().zero_();
}

Tensor LexicalModel::forward(const Tensor& attention, const Tensor& source_embeddings) const {
  ATTN_CHECK(attention.dim() == 3 && source_embeddings.dim() == 3 && attention.size(0) == source_embeddings.size(0) &&
                 attention.size(2) == source_embeddings.size(1) && source_embeddings.size(2) == proj->weight.size(1),
             "lexical model: attention [B, T, S] and source embeddings [B, S, {}] do not match: {} and {}",
             proj->weight.size(1), attention.shape().str(), source_embeddings.shape().str());
  const Tensor attended = tanh(matmul(attention, source_embeddings));  // f_t
  return tanh(proj->forward(attended));                                // h_t
}

}  // namespace attn::nn
