// What a token mixer is built from (docs/models.md §2–§5): the place it serves, its layer,
// and the typed options of its family. The model config is parsed into these once, at the
// edge (nn/transformer/layer_wiring.hpp); mixers never read config strings.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace attn::nn {

class Module;

// Linformer (docs/models.md §4): E, F ∈ ℝ^{k×max_seq_len} over the sequence axis, indexed by
// position within the sentence (sources are left-padded), pads zeroed before projecting.
struct LinformerOptions {
  int64_t max_seq_len = 1024;  // n_max: columns of E and F (longer sentences are refused)
  int64_t k = 256;             // compressed length (fairseq: max_seq_len / --compressed)
  bool shared_kv = false;      // E = F within a layer (--shared-kv-compressed)
  bool shared_layer = false;   // one E for K and V in every layer (--shared-layer-kv-compressed)
  bool freeze = false;         // E and F not trained (--freeze-compress)
  bool xavier_init = false;    // default: PyTorch's Linear init U(±1/√max_seq_len)
};

// LightConv / DynamicConv (docs/models.md §3): the conv block linear1 → GLU → conv → linear2.
struct ConvOptions {
  int64_t kernel_size = 3;       // K of this layer (from --{encoder,decoder}-kernel-size-list)
  int64_t conv_dim = 0;          // C (0: the embedding dim)
  bool glu = true;               // linear1 to 2C and a GLU (--{encoder,decoder}-glu)
  bool weight_softmax = true;    // softmax over the K taps (--weight-softmax)
  double weight_dropout = 0.0;   // DropConnect on the normalised taps (--weight-dropout)
  double input_dropout = 0.0;    // dropout on the block input (--input-dropout)
  // DynamicConv only: renormalise the softmax over the last T taps of the padded length as
  // fairseq's TorchScript path does (for its checkpoints); default: over all K taps.
  bool fairseq_softmax_span = false;
};

// Kernelized and decaying attention (docs/models.md §5), kind `kernel:<feature map>+<rule>`.
struct KernelOptions {
  // T2R: φ's size m; RFA: the number of random features D (φ has 2D). The T2R code's
  // --causal-proj-dim (decoder self-attention) or --cross-proj-dim (the other places).
  int64_t feature_size = 32;
  int64_t dpfp_rolls = 2;  // DPFP's ν (--dpfp-rolls)
  bool redraw = true;      // RFA, Performer: fresh random features at every training forward (--redraw-random-features)
  uint64_t draw_stream = 0;  // RFA, Performer: keys the training draws; unique per place and layer
};

struct MixerOptions {
  std::string kind;               // "softmax", "linformer", "lightconv", "dynamicconv", "kernel:elu+additive", ...
  int64_t embed_dim = 0;          // D
  int64_t num_heads = 1;          // H, with D divisible by H
  double attention_dropout = 0.0;
  bool cross_attention = false;   // keys/values from MixerContext::memory (encoder–decoder)
  int64_t layer = 0;              // index of the layer in its stack (encoder or decoder)
  LinformerOptions linformer;
  ConvOptions conv;
  KernelOptions kernel;
  // A module shared by this place's mixers in every layer of the stack (Linformer's
  // layerwise E), built once by the stack and saved once; null when the family has none.
  std::shared_ptr<Module> shared;
};

}  // namespace attn::nn
