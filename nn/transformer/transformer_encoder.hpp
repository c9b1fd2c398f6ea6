// The Transformer encoder (docs/models.md §1.2–1.4): x_0 = Dropout(√D·E[src] + PE[pos]),
// multiplied by (1 − pad_mask) (encoder pad zeroing, §1.2), then the stack of encoder
// layers, then a final LayerNorm for pre-norm models only. Sources are left-padded (§1.1).
#pragma once
#include <memory>
#include <vector>

#include "nn/layers/embedding.hpp"
#include "nn/layers/normalization.hpp"
#include "nn/layers/positional_embedding.hpp"
#include "nn/transformer/encoder_layer.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::nn {

struct EncoderOutput {
  Tensor out;           // [B, S, D]
  Tensor padding_mask;  // Bool [B, S], true at source pads; undefined when the batch has none
  Tensor embeddings;    // [B, S, D] √D·E[src] before positions and dropout: the lexical model's
                        // input (docs/models.md §1.2.2); undefined without it
};

class TransformerEncoder : public Module {
 public:
  // `embed_tokens` is shared with the decoder under share_all_embeddings.
  TransformerEncoder(const TransformerConfig& config, std::shared_ptr<Embedding> embed_tokens);
  // src_tokens int64 [B, S]; `maps` (optional) receives one [B, H, S, S] per layer.
  EncoderOutput forward(const Tensor& src_tokens, std::vector<Tensor>* maps = nullptr);

  std::shared_ptr<Embedding> embed_tokens;
  std::shared_ptr<PositionalEmbedding> embed_positions;
  std::vector<std::shared_ptr<TransformerEncoderLayer>> layers;
  std::shared_ptr<Normalization> layer_norm;  // pre-norm only

 private:
  double embed_scale_;
  double dropout_;
  double word_dropout_;  // §1.2.1
  bool keep_embeddings_;  // lexical_model: return the scaled embeddings (§1.2.2)
  int64_t padding_idx_;
};

}  // namespace attn::nn
