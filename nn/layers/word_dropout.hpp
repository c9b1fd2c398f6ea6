// Word dropout (docs/models.md §1.2.1; Sennrich & Zhang 2019, for small corpora): in
// training, every token's whole embedding vector is zeroed with probability p and the kept
// vectors are scaled by 1/(1 - p), so the model cannot lean on any one source word (encoder)
// or previous target word (decoder) and has to use the rest of the sentence. One random
// number per token, drawn from the generator like any dropout; the identity in evaluation.
#pragma once
#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace attn::nn {

// embedded [B, T, D] → the same shape, whole rows [b, t, :] dropped together.
Tensor word_dropout(const Tensor& embedded, double p, bool training, Generator* gen = nullptr);

}  // namespace attn::nn
