// The padding mask of a batch of token ids (docs/models.md §1.1): true where a position
// holds the pad token. Encoder and decoder pass it to their layers only when a pad is present,
// as a batch without pads takes the cheaper unmasked path.
#pragma once
#include <cstdint>

#include "core/tensor.hpp"

namespace attn::nn {

// tokens int64 [B, T] -> bool [B, T], or an undefined tensor when the batch has no pad.
// Only tokens in host memory are looked at: for tokens on a device the mask is always
// returned (a mask of no pads changes no result), because looking would make the host wait
// for the device in the middle of the forward pass.
Tensor padding_mask_if_any(const Tensor& tokens, int64_t padding_idx);

}  // namespace attn::nn
