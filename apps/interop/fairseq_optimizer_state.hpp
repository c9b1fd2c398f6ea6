// An attnlab optimizer's state as fairseq's trainer saves its own (`last_optimizer_state` and
// the optimizer's name in `optimizer_history`), so that `fairseq-train --restore-file` goes on
// from an exported checkpoint with the same Adam moments or NAG momentum, not fresh ones
// (export-fairseq --with-optimizer-state), and fairseq's the other way, for `attnlab train
// --restore-file` on an imported one (import-fairseq --with-optimizer-state).
//
// fairseq's optimizers are torch optimizers over `model.parameters()`: their state dict numbers
// the parameters 0, 1, ... in that order — PyTorch's: a module's own parameters before its
// children's, the children in the order their constructor assigns them, a tied matrix once,
// under its first name — and holds, per number, Adam's {"step", "exp_avg", "exp_avg_sq"} or
// NAG's {"momentum_buffer"} (none for a parameter that never had a gradient, such as
// DynamicConv's unused conv_bias), and one parameter group with the hyperparameters, which
// torch's load_state_dict keeps over the new run's (unless --optimizer-overrides).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/interop/torch_file.hpp"
#include "apps/interop/torch_file_writer.hpp"
#include "core/safetensors.hpp"
#include "core/tensor.hpp"
#include "data/python_pickle.hpp"

namespace attn::app {

// What a checkpoint holds of its optimizer.
struct FairseqOptimizerSource {
  std::string name;                     // attnlab's: "adam" or "nag" (metadata "optimizer")
  nlohmann::json options;               // metadata "optimizer_options"
  std::map<std::string, Tensor> state;  // the optimizer file (nn/optimizer.hpp state_dict())
  double lr = 0;                        // the last update's
};

// One of fairseq's parameters: its name there, its shape, and the attnlab names of the same
// tensor (a tied matrix has several; none for a parameter attnlab does not have).
struct FairseqParameter {
  std::string fairseq_name;
  Shape shape;
  std::vector<std::string> attnlab_names;
};

// fairseq's parameters of an exported transformer or lightconv model in its order, from the
// exported tensors in the state dict's order, each with its fairseq and attnlab names (attnlab's
// empty for fairseq's own additions). Buffers (`version`, `_float_tensor`) are left out by name;
// throws attn::Error for a layer weight whose place in fairseq's layers is not known.
struct ExportedTensor {
  std::string fairseq_name, attnlab_name;
  Tensor tensor;
};
std::vector<FairseqParameter> fairseq_parameters(const std::vector<ExportedTensor>& tensors);

// fairseq's class of the criterion its command line names (label_smoothed_cross_entropy,
// cross_entropy), as optimizer_history records it; throws for another.
std::string fairseq_criterion_class(const std::string& criterion);

struct FairseqOptimizerState {
  std::string optimizer_name;  // fairseq's class: FairseqAdam or FairseqNAG
  data::PickleRef state;       // last_optimizer_state
};
// Throws attn::Error naming a missing entry, a state of another shape or an unknown optimizer.
FairseqOptimizerState fairseq_optimizer_state(const FairseqOptimizerSource& source,
                                              const std::vector<FairseqParameter>& parameters, TorchFileWriter& file);

// The other way (import-fairseq --with-optimizer-state): the optimizer state a fairseq trainer
// saved in `file` as attnlab's optimizer file for the model whose fairseq parameters are
// `parameters` and whose trainable ones are `trainable` (named_parameters()), with what its
// checkpoint's metadata records of the optimizer.
struct ImportedOptimizerState {
  std::string name;         // attnlab's: "adam" or "nag"
  nlohmann::json options;   // metadata "optimizer_options"
  NamedTensors state;       // the optimizer file; zeros (step 0) where fairseq kept no state
  int64_t num_updates = 0;  // optimizer_history's
  double lr = 0;            // the parameter group's
  std::string criterion;    // fairseq's command-line name of the criterion
};
// Throws attn::Error naming `path` and the entry for a state attnlab's optimizers cannot hold
// (another optimizer, fp16's flattened state, AMSGrad, another numbering or shape).
ImportedOptimizerState imported_optimizer_state(const TorchFile& file, const std::string& path,
                                                const std::vector<FairseqParameter>& parameters,
                                                const NamedTensors& trainable);

}  // namespace attn::app
