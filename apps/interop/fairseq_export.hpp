// An attnlab model as a fairseq checkpoint (`model.pt`), the inverse of fairseq_checkpoint.hpp:
// what fairseq's `load_checkpoint_to_cpu` and its model's `load_state_dict(strict=True)` take,
// for fairseq-generate, fairseq-interactive or further training there.
//
// Two of fairseq's models can hold an attnlab model: `transformer` (softmax attention in
// every place) and `lightconv` (LightConv or DynamicConv self-attention in both stacks, one
// conv type per stack, softmax cross-attention). The hyperparameters go into "args", an
// argparse.Namespace under fairseq's names (every field that decides the model; fairseq fills
// the rest from its defaults), with the task's (translation, the languages, the data dir).
// The state dict ("model") is attnlab's under fairseq's names, plus what fairseq's modules
// hold besides: `encoder.version` / `decoder.version` (3 for the Transformer, whose decoder
// would otherwise lose its final LayerNorm; 2 for LightConv), the sinusoidal positions'
// `_float_tensor`, DynamicConv's unused `conv.conv_bias` (zeros), and a LightConv encoder
// layer's LayerNorms under today's fairseq names `layer_norm1`/`layer_norm2`. The training
// state fairseq reads ("optimizer_history", "extra_state") records the updates, epoch, best
// loss and the criterion's and optimizer's names; the optimizer's state
// ("last_optimizer_state", fairseq_optimizer_state.hpp) when the source holds it.
//
// What fairseq has no model for is refused naming it: ScaleNorm, FixNorm, the lexical model,
// gated FFNs, Linformer and kernelized or decaying attention, a mixer per layer, a conv stack
// beside a softmax one, or for LightConv no embedding scale or no final LayerNorm. A DynamicConv
// decoder trained with attnlab's full softmax span is exported with a note: fairseq's full
// forward (its training, validation, --score-reference) renormalises the taps of a target
// shorter than the kernel, its beam search does not (docs/models.md §3.1).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "apps/interop/fairseq_optimizer_state.hpp"
#include "apps/interop/torch_file_writer.hpp"
#include "core/safetensors.hpp"
#include "data/python_pickle.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::app {

struct FairseqExportSource {
  nn::TransformerConfig config;
  NamedTensors weights;  // the model's state_dict(): fairseq's names
  std::string source_lang, target_lang, data_dir;
  int64_t num_updates = 0, epoch = 1;
  std::optional<double> best_loss;
  std::string criterion = "label_smoothed_cross_entropy";  // fairseq's name of the training loss
  std::optional<FairseqOptimizerSource> optimizer;         // written when given
};

struct FairseqExport {
  std::string arch;  // fairseq's: "transformer" or "lightconv"
  data::PickleRef root;
  TorchFileWriter file;            // holds the tensors root refers to
  std::vector<std::string> notes;  // what a user should know (the softmax span)
  void write(const std::string& path) const { file.write(path, *root); }
};

// Throws attn::Error naming what fairseq cannot hold.
FairseqExport fairseq_checkpoint_of(const FairseqExportSource& source);

// The tensors of fairseq's state dict for a model of `config` with these weights (its
// state_dict()): the weights under fairseq's names, then the buffers fairseq's modules add.
std::vector<ExportedTensor> fairseq_tensors(const nn::TransformerConfig& config, const NamedTensors& weights);

}  // namespace attn::app
