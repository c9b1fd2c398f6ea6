// Inspection of a whole model's attention (docs/design.md §4): the weights every head of every
// layer puts on each position, one [B, H, Tq, Tk] tensor per layer and place.
#pragma once
#include <vector>

#include "core/tensor.hpp"

namespace attn::nn {

struct AttentionMaps {
  std::vector<Tensor> encoder_self;  // per encoder layer: [B, H, S, S]
  std::vector<Tensor> decoder_self;  // per decoder layer: [B, H, T, T]
  std::vector<Tensor> cross;         // per decoder layer: [B, H, T, S]
};

}  // namespace attn::nn
