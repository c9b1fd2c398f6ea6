// A fairseq translation checkpoint (`model.pt`, `checkpoint_best.pt`: what fairseq-train saves
// and what fairseq publishes) as an attnlab model: its configuration and weights. Two of
// fairseq's models: `transformer` (--arch transformer*) and `lightconv` (--arch lightconv*,
// LightConv or DynamicConv by --encoder-conv-type / --decoder-conv-type).
//
// The file (torch_file.hpp) pickles a dict: "model", the state dict under fairseq's names
// (attnlab's are the same, docs/models.md §1.10), and the hyperparameters, as "args" (an
// argparse.Namespace, fairseq before 0.10 and the published models) or "cfg" (a dict whose
// "model" is a Namespace or a dict, flat or with each side's fields nested as fairseq 0.12's
// dataclasses write them, and whose "task" names the languages). The configuration
// starts from attnlab's preset of the same --arch when there is one (else the family's base
// model) and takes every hyperparameter that attnlab's configuration has under the
// same fairseq name (nn/transformer/transformer_config.hpp config_flags); the vocabulary sizes
// come from the embeddings. Old names are upgraded as fairseq's upgrade_state_dict_named
// does: a Transformer layer's `layer_norms.N` (encoder 0, 1: self_attn_layer_norm,
// final_layer_norm; decoder 0, 1, 2: self_attn, encoder_attn, final), attention's
// `in_proj_weight`/`in_proj_bias` (q, k and v stacked) split into q_proj, k_proj, v_proj, the
// decoder's `embed_out` as `output_projection.weight` (the token embedding when tied). A
// LightConv encoder layer's `layer_norm1`/`layer_norm2` (fairseq's names since 2021) become
// the published models' `layer_norms.0`/`layer_norms.1`, which attnlab uses, and taps saved by
// fairseq's CUDA layer as [H, K] become [H, 1, K]; fairseq's conv types default to dynamic,
// and its causal DynamicConv's softmax span is kept (fairseq_dynamic_softmax_span). Entries
// that hold no weights (`*.version`, the sinusoidal positions' `_float_tensor`, DynamicConv's
// unused `conv.conv_bias`) are left out, and a Transformer decoder whose version is at most 2
// has no final LayerNorm, as fairseq reads it. Half, bfloat16 and double weights become
// float32. A hyperparameter attnlab has no model for (an adaptive softmax or input,
// cross-self-attention, a LayerNorm on the embeddings, ...) is an error naming it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "apps/interop/torch_file.hpp"
#include "core/tensor.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::app {

struct FairseqModel {
  nn::TransformerConfig config;
  std::map<std::string, Tensor> weights;  // attnlab's (fairseq's) names, float32
  std::string arch;                       // fairseq's --arch, as recorded
  std::string source_lang, target_lang;   // as recorded; empty when the file names none
  std::vector<std::string> left_out;      // entries of the file's state dict not used
};

FairseqModel read_fairseq_checkpoint(const std::string& path);
// The same from the file already read (its optimizer state is read from it too: import-fairseq
// --with-optimizer-state); errors name `path`.
FairseqModel read_fairseq_checkpoint(const TorchFile& file, const std::string& path);

// A LightConv encoder layer's LayerNorm names, either way: fairseq's since 2021 (`layer_norm1`,
// `layer_norm2`; to_today) or its published models' (`layer_norms.0`, `layer_norms.1`), which
// attnlab uses. Other names come back as they are.
std::string lightconv_layer_norm_name(const std::string& name, bool to_today);

}  // namespace attn::app
