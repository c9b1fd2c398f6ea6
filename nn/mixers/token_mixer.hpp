// The token-mixer interface (docs/design.md §4): every attention variant — softmax, Linformer,
// LightConv/DynamicConv, kernelized and decaying attention — implements it, and the
// encoder/decoder layers only ever talk to a TokenMixer, so a new variant plugs in without
// touching the model code.
//
// Layout is batch-first: x [B, T, D]. Three uses:
// * parallel forward over whole sequences (training, scoring) with key-padding and causal
//   masks;
// * incremental decoding: init_state() once, step() per new token, reorder() when beam
//   search reshuffles hypotheses;
// * inspection: the weights each head puts on each position, [B, H, Tq, Tk], explicit for
//   softmax attention and implied for the others.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>

#include "nn/module.hpp"

namespace attn::nn {

// What a mixer attends over.
struct MixerContext {
  // Cross-attention: the encoder output [B, S, D]; undefined for self-attention.
  Tensor memory;
  // Bool [B, Tk], true at padding positions of the keys (self: the input; cross: memory).
  // Undefined when there is no padding.
  Tensor key_padding_mask;
  // Decoder self-attention: position i sees only j <= i.
  bool causal = false;
  // When non-null, the mixer stores its attention weights [B, H, Tq, Tk] here.
  Tensor* attention_weights = nullptr;
};

// Per-sequence decoding state of one mixer (KV cache, (S, z) sums, conv window, ...).
struct MixerState {
  virtual ~MixerState() = default;
  // Bytes the state holds for its sentences (what decoding memory grows with).
  virtual int64_t size_bytes() const = 0;
};

// Bytes of a state's tensors (undefined ones count 0).
int64_t tensor_bytes(std::initializer_list<Tensor> tensors);

class TokenMixer : public Module {
 public:
  // x [B, T, D] -> [B, T, D].
  virtual Tensor forward(const Tensor& x, const MixerContext& ctx) = 0;
  // A fresh state for a batch of B sequences; cross-attention mixers compute what they can
  // from ctx.memory once here (projected encoder keys/values).
  virtual std::unique_ptr<MixerState> init_state(int64_t batch, const MixerContext& ctx) = 0;
  // One new token per sequence: x [B, 1, D] -> [B, 1, D]; appends to the state.
  // ctx.key_padding_mask for self-attention covers the prefix *including* this step ([B, t+1]) or is undefined.
  virtual Tensor step(const Tensor& x, MixerState& state, const MixerContext& ctx) = 0;
  // Keeps/duplicates state rows: new row i = old row order[i] (int64 [B']).
  virtual void reorder(MixerState& state, const Tensor& order) = 0;
  virtual std::string kind() const = 0;  // "softmax", "linformer", "kernel:elu+additive", ...
};

}  // namespace attn::nn
