// Helpers of the token-mixer interface. See token_mixer.hpp.
#include "nn/mixers/token_mixer.hpp"

namespace attn::nn {

int64_t tensor_bytes(std::initializer_list<Tensor> tensors) {
  int64_t bytes = 0;
  for (const Tensor& t : tensors)
    if (t.defined()) bytes += int64_t(t.nbytes());
  return bytes;
}

}  // namespace attn::nn
