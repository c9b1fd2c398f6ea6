// The swap of swap-then-finetune (Kasai et al. 2021 §2.2; docs/models.md §5.4) as a library
// call, for `attnlab convert` and the demo's comparison: a new model (a preset, or the
// source's configuration, with the source's vocabulary and any overrides) takes every weight
// it shares with a trained checkpoint by name and shape; what is new (feature maps, gates) is
// initialised from the seed. The output is a weights-only checkpoint with the source's
// dictionaries beside it, ready for `train --finetune-from-model`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/transformer/transformer_config.hpp"
#include "nn/weight_transfer.hpp"

namespace attn::app {

struct ConversionRequest {
  std::string from, output;  // checkpoint names (NAME, NAME.safetensors or NAME.json)
  std::string to_arch;       // empty: the source's configuration
  std::vector<std::string> model_overrides;
  uint64_t seed = 1;
};

struct ConversionResult {
  nn::TransformerConfig source, target;
  nn::WeightTransfer transfer;
  int64_t parameters = 0;  // of the new model
};

// Refuses (attn::Error) a new model whose heads differ from the source's, naming the field, and
// an output that would lose a training run's state (check_weights_only_output in checkpoint.hpp).
ConversionResult convert_checkpoint(const ConversionRequest& request);

}  // namespace attn::app
