"""Transformers built and saved by fairseq itself (3d262bb; PyTorch 1.13.1) on ../data-bin's
dictionaries, their weights moved off fairseq's initial values, with fairseq's own base-2
log-probabilities of each valid reference token (the P- lines of `generate --score-reference`):
* fairseq_prenorm.pt / .scores: pre-norm, 2+2 layers of width 16, sinusoidal positions;
* fairseq_postnorm_tied.pt / .scores: post-norm, 1+2 layers, learned positions (128), the
  decoder's output matrix tied to its embedding.
Run from this folder with fairseq importable (its optional dependencies stubbed) and
dict.en.txt, dict.de.txt copied here:
    python3 make_fairseq_models.py
"""
import argparse
import math

import torch
from fairseq.data import Dictionary
from fairseq.data.indexed_dataset import MMapIndexedDataset
from fairseq.models.transformer import TransformerModel
from fairseq.models.transformer.transformer_legacy import base_architecture

src, tgt = Dictionary.load("dict.en.txt"), Dictionary.load("dict.de.txt")


class Task:
    source_dictionary, target_dictionary = src, tgt


def make(name, seed, **fields):
    torch.manual_seed(seed)
    args = argparse.Namespace(arch="transformer", encoder_embed_dim=16, decoder_embed_dim=16, encoder_ffn_embed_dim=32,
                              decoder_ffn_embed_dim=32, encoder_attention_heads=2, decoder_attention_heads=2,
                              dropout=0.1, source_lang="en", target_lang="de", task="translation", data="data-bin",
                              **fields)
    base_architecture(args)
    model = TransformerModel.build_model(args, Task())
    with torch.no_grad():  # away from fairseq's initial zeros (biases, LayerNorm) so that every weight counts
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    model.eval()
    torch.save({"args": args, "model": model.state_dict(), "optimizer_history": [], "extra_state": {"epoch": 1}},
               name + ".pt")
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


make("fairseq_prenorm", 3, encoder_layers=2, decoder_layers=2, encoder_normalize_before=True,
     decoder_normalize_before=True, max_source_positions=1024, max_target_positions=1024)
make("fairseq_postnorm_tied", 4, encoder_layers=1, decoder_layers=2, encoder_normalize_before=False,
     decoder_normalize_before=False, encoder_learned_pos=True, decoder_learned_pos=True,
     share_decoder_input_output_embed=True, max_source_positions=128, max_target_positions=128)
