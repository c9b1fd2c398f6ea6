#include "nn/layers/word_dropout.hpp"

#include "autograd/ops.hpp"
#include "core/ops.hpp"

namespace attn::nn {

Tensor word_dropout(const Tensor& embedded, double p, bool training, Generator* gen) {
  ATTN_CHECK(p >= 0.0 && p < 1.0, "word_dropout: probability must be in [0, 1), got {}", p);
  ATTN_CHECK(embedded.dim() == 3, "word_dropout: expects embeddings [B, T, D], got {}", embedded.shape().str());
  if (!training || p == 0.0) return embedded;
  // The token mask [B, T, 1]: inverted dropout of ones, i.e. 0 or 1/(1 - p) per token,
  // broadcast over the D channels by the product (a constant: no gradient flows into it).
  const Tensor per_token = ones({embedded.size(0), embedded.size(1), 1}, embedded.dtype(), embedded.device());
  return mul(embedded, ops::dropout(per_token, p, gen).out);
}

}  // namespace attn::nn
