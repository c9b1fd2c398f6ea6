"""Loads a model.pt written by `attnlab export-fairseq` as fairseq does (torch.load, fairseq's
checkpoint upgrade, the model built from the recorded args, load_state_dict(strict=True)) and
prints fairseq's base-2 log-probabilities of each reference token of a binarized split (P-
lines, as `generate --score-reference`) and its beam search hypotheses (H- lines).
    python3 check_export.py DIR DATA_BIN SPLIT
"""
import argparse, math, sys
import torch
from fairseq import checkpoint_utils
from fairseq.data import Dictionary
from fairseq.data.indexed_dataset import MMapIndexedDataset
from fairseq.models.lightconv import LightConvModel
from fairseq.models.transformer import TransformerModel
from fairseq.sequence_generator import SequenceGenerator

folder, data, split = sys.argv[1:4]
state = torch.load(folder + "/model.pt")
checkpoint_utils.convert_namespace_to_omegaconf = lambda args: None  # hydra is not installed here
state = checkpoint_utils._upgrade_state_dict(state)
args = state["args"]
src = Dictionary.load(f"{folder}/dict.{args.source_lang}.txt")
tgt = Dictionary.load(f"{folder}/dict.{args.target_lang}.txt")
class Task: source_dictionary, target_dictionary = src, tgt
model = (TransformerModel if args.arch.startswith("transformer") else LightConvModel).build_model(args, Task())
model.load_state_dict(state["model"], strict=True)
model.eval()
pair = f"{args.source_lang}-{args.target_lang}"
sources = MMapIndexedDataset(f"{data}/{split}.{pair}.{args.source_lang}")
targets = MMapIndexedDataset(f"{data}/{split}.{pair}.{args.target_lang}")
generator = SequenceGenerator([model], tgt, beam_size=5)
for i in range(len(sources)):
    s = sources[i].long().unsqueeze(0)
    t = targets[i].long().unsqueeze(0)
    prev = torch.cat([torch.tensor([[tgt.eos()]]), t[:, :-1]], dim=1)
    with torch.no_grad():
        lprobs = model.get_normalized_probs(model(s, torch.tensor([s.size(1)]), prev), log_probs=True)
        hypo = generator.generate([model], {"net_input": {"src_tokens": s, "src_lengths": torch.tensor([s.size(1)])}})[0][0]
    scores = lprobs.gather(2, t.unsqueeze(2)).squeeze(2).squeeze(0) / math.log(2)
    print("P-%d\t%s" % (i, " ".join("%.4f" % x for x in scores.tolist())))
    print("H-%d\t%s" % (i, tgt.string(hypo["tokens"])))
