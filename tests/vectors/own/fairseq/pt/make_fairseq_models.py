"""Models built and saved by fairseq itself (3d262bb; PyTorch 1.13.1) on ../data-bin's
dictionaries, their weights moved off fairseq's initial values, with fairseq's own base-2
log-probabilities of each valid reference token (the P- lines of `generate --score-reference`):
* fairseq_prenorm.pt / .scores: Transformer, pre-norm, 2+2 layers of width 16, sinusoidal
  positions;
* fairseq_postnorm_tied.pt / .scores: Transformer, post-norm, 1+2 layers, learned positions
  (128), the decoder's output matrix tied to its embedding;
* fairseq_dynamicconv.pt / .scores: LightConv model with DynamicConv in both stacks, post-norm,
  GLU, 2+2 layers, kernel widths 3, 5 (encoder) and 3, 15 (decoder: no wider than the shortest
  reference, so that fairseq's softmax span plays no part in its scores);
* fairseq_dynamicconv_2019.pt: the same weights under the names of fairseq's published 2019
  models (encoder `layer_norms.0/1`, `decoder.embed_out`, no `conv_bias`) in PyTorch's legacy
  layout; scored by fairseq_dynamicconv.scores;
* fairseq_dynamicconv_wide.pt / .scores: DynamicConv in one decoder layer of width 31, wider
  than most references, so that fairseq's softmax over the last T taps decides its scores (each
  reference scored alone, as `generate --score-reference --batch-size 1` does);
* fairseq_lightconv_prenorm.pt / .scores: LightConv in both stacks, pre-norm, GLU in the
  encoder only, conv width 24, learned positions, the output matrix tied, the taps saved as
  [H, K] as fairseq's CUDA layer keeps them.
The DynamicConv files differ from run to run in `conv_bias`, which fairseq allocates without
initialising (and never uses); their scores do not. Run from this folder with fairseq importable (its optional dependencies stubbed) and
dict.en.txt, dict.de.txt copied here:
    python3 make_fairseq_models.py
"""
import argparse
import math

import torch
from fairseq.data import Dictionary
from fairseq.data.indexed_dataset import MMapIndexedDataset
from fairseq.models.lightconv import LightConvModel
from fairseq.models.lightconv import base_architecture as lightconv_architecture
from fairseq.models.transformer import TransformerModel
from fairseq.models.transformer.transformer_legacy import base_architecture as transformer_architecture

src, tgt = Dictionary.load("dict.en.txt"), Dictionary.load("dict.de.txt")


class Task:
    source_dictionary, target_dictionary = src, tgt


def build(family, seed, **fields):
    torch.manual_seed(seed)
    args = argparse.Namespace(arch=family, encoder_embed_dim=16, decoder_embed_dim=16, encoder_ffn_embed_dim=32,
                              decoder_ffn_embed_dim=32, encoder_attention_heads=2, decoder_attention_heads=2,
                              dropout=0.1, source_lang="en", target_lang="de", task="translation", data="data-bin",
                              **fields)
    if family == "transformer":
        transformer_architecture(args)
        model = TransformerModel.build_model(args, Task())
    else:
        args.weight_softmax = True  # fairseq's command-line default, which base_architecture leaves to argparse
        lightconv_architecture(args)
        model = LightConvModel.build_model(args, Task())
    with torch.no_grad():  # away from fairseq's initial zeros (biases, LayerNorm) so that every weight counts
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    model.eval()
    return args, model


def save(name, args, state, **options):
    torch.save({"args": args, "model": state, "optimizer_history": [], "extra_state": {"epoch": 1}}, name + ".pt",
               **options)


def write_scores(name, model):
    sources = MMapIndexedDataset("../data-bin/valid.en-de.en")
    targets = MMapIndexedDataset("../data-bin/valid.en-de.de")
    with open(name + ".scores", "w") as out:
        for i in range(len(sources)):
            s = sources[i].long().unsqueeze(0)
            t = targets[i].long().unsqueeze(0)
            prev = torch.cat([torch.tensor([[tgt.eos()]]), t[:, :-1]], dim=1)
            with torch.no_grad():
                lprobs = model.get_normalized_probs(model(s, torch.tensor([s.size(1)]), prev), log_probs=True)
            scores = lprobs.gather(2, t.unsqueeze(2)).squeeze() / math.log(2)
            out.write("P-%d\t%s\n" % (i, " ".join("%.4f" % x for x in scores.tolist())))


def make(name, seed, family="transformer", **fields):
    args, model = build(family, seed, **fields)
    save(name, args, model.state_dict())
    write_scores(name, model)
    return args, model


def renamed_2019(state):
    """A LightConv state dict under the names of fairseq's 2019 models."""
    old = {}
    for key, value in state.items():
        if key.endswith(".conv.conv_bias"):
            continue
        key = key.replace(".layer_norm1.", ".layer_norms.0.").replace(".layer_norm2.", ".layer_norms.1.")
        old["decoder.embed_out" if key == "decoder.output_projection.weight" else key] = value
    return old


make("fairseq_prenorm", 3, encoder_layers=2, decoder_layers=2, encoder_normalize_before=True,
     decoder_normalize_before=True, max_source_positions=1024, max_target_positions=1024)
make("fairseq_postnorm_tied", 4, encoder_layers=1, decoder_layers=2, encoder_normalize_before=False,
     decoder_normalize_before=False, encoder_learned_pos=True, decoder_learned_pos=True,
     share_decoder_input_output_embed=True, max_source_positions=128, max_target_positions=128)
args, model = make("fairseq_dynamicconv", 5, family="lightconv", encoder_layers=2, decoder_layers=2,
                   encoder_conv_type="dynamic", decoder_conv_type="dynamic", encoder_kernel_size_list=[3, 5],
                   decoder_kernel_size_list=[3, 15], max_source_positions=1024, max_target_positions=1024)
save("fairseq_dynamicconv_2019", args, renamed_2019(model.state_dict()), _use_new_zipfile_serialization=False)
args, model = build("lightconv", 6, encoder_layers=2, decoder_layers=1, encoder_conv_type="lightweight",
                    decoder_conv_type="lightweight", encoder_kernel_size_list=[3], decoder_kernel_size_list=[5],
                    encoder_normalize_before=True, decoder_normalize_before=True, decoder_glu=False,
                    encoder_conv_dim=24, decoder_conv_dim=24, encoder_learned_pos=True, decoder_learned_pos=True,
                    share_decoder_input_output_embed=True, max_source_positions=128, max_target_positions=128)
save("fairseq_lightconv_prenorm", args,
     {k: v.squeeze(1) if k.endswith(".conv.weight") else v for k, v in model.state_dict().items()})
write_scores("fairseq_lightconv_prenorm", model)
make("fairseq_dynamicconv_wide", 7, family="lightconv", encoder_layers=1, decoder_layers=1,
     encoder_conv_type="dynamic", decoder_conv_type="dynamic", encoder_kernel_size_list=[3],
     decoder_kernel_size_list=[31], max_source_positions=1024, max_target_positions=1024)
