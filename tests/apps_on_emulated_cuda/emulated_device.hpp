// What the tests on the emulated CUDA runtime share: the device, switching it on, and a model
// preset cut to test size.
#pragma once
#include <string>
#include <vector>

#include "core/device_runtime.hpp"
#include "cuda/cuda_device_runtime.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::app::testing {

inline const Device kCuda = Device::cuda(0);

// Installs the emulated runtime's CUDA backend and makes "cuda:0" usable.
inline void switch_on_emulated_cuda() {
  cuda::install_cuda_runtime();
  use_device(kCuda);
}

// `preset` with the `extra` overrides, at test size: 1 + 1 layers, width 32, FFN 64, 2 heads,
// shared embeddings over a vocabulary of 20 (convolutions: widths 3 and 5).
inline nn::TransformerConfig test_size_config(const std::string& preset, const std::vector<std::string>& extra = {}) {
  nn::TransformerConfig c = nn::transformer_preset(preset);
  nn::apply_overrides(c, extra);
  nn::apply_overrides(c, {"encoder_layers=1", "decoder_layers=1", "encoder_embed_dim=32", "decoder_embed_dim=32",
                          "encoder_ffn_embed_dim=64", "decoder_ffn_embed_dim=64", "encoder_attention_heads=2",
                          "decoder_attention_heads=2", "share_all_embeddings=true"});
  if (c.encoder_self_mixer == "conv") nn::apply_overrides(c, {"encoder_kernel_size_list=3", "decoder_kernel_size_list=5"});
  c.src_vocab_size = c.tgt_vocab_size = 20;
  return c;
}

}  // namespace attn::app::testing
