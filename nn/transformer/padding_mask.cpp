#include "nn/transformer/padding_mask.hpp"

#include <algorithm>

#include "core/ops.hpp"

namespace attn::nn {

Tensor padding_mask_if_any(const Tensor& tokens, int64_t padding_idx) {
  Tensor pads = ops::eq(tokens, double(padding_idx));
  if (!pads.device().is_cpu()) return pads;
  const Tensor flags = pads.contiguous();
  const bool* first = flags.data<bool>();
  return std::any_of(first, first + flags.numel(), [](bool pad) { return pad; }) ? pads : Tensor();
}

}  // namespace attn::nn
