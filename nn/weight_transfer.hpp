// Moving trained weights into a model of other mixers: the swap of T2R's swap-then-finetune
// (docs/models.md §5.4). A kernelized or decaying mixer keeps softmax attention's q_proj,
// k_proj, v_proj and out_proj, so a trained softmax Transformer's projections, FFNs,
// embeddings and norms carry over by name; what the new mixers add (T2R's fc3/fc4, gates)
// keeps its fresh initialisation, and what the old ones had and the new ones lack (Linformer's
// E, a conv block) is dropped. Every tensor is accounted for in the report.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "nn/module.hpp"

namespace attn::nn {

struct WeightTransfer {
  std::vector<std::string> copied;   // in both, same shape: the source's values
  std::vector<std::string> added;    // only in the target: freshly initialised
  std::vector<std::string> dropped;  // only in the source
  // The target's parameters that hold copied values: a tied tensor (one storage under several
  // names) counts once and buffers not at all, as in Module::num_parameters.
  int64_t copied_parameters = 0;
};

// Copies every tensor of `source` whose name the target's state dict has into the target.
// A name in both with different shapes is an error naming the key and both shapes (widths
// or head layouts that cannot map); nothing is copied then.
WeightTransfer transfer_weights(const std::map<std::string, Tensor>& source, Module& target);

}  // namespace attn::nn
