"""Loads a model.pt written by `attnlab export-fairseq` as fairseq does (torch.load, fairseq's
checkpoint upgrade, the model built from the recorded args, load_state_dict(strict=True)) and
prints, for each sentence of a binarized split, fairseq's base-2 log-probabilities of the
reference tokens (P- lines, as `generate --score-reference`) and the best hypothesis of its
SequenceGenerator with its score (H- lines, as `generate`), built as fairseq-generate builds it
from the same flags:
    python3 check_export.py DIR DATA_BIN SPLIT [--beam 5] [--lenpen 1] [--prefix-size N]
        [--diverse-beam-groups G --diverse-beam-strength S] [--match-source-len] [--diversity-rate R]
        [--constraints ordered|unordered --constraints-file FILE]
fairseq_prenorm.{prefix,dbs,match,siblings}.hypotheses are its H- lines for fairseq_prenorm.pt (imported,
then exported: `attnlab import-fairseq` and `export-fairseq`) on ../data-bin's valid split with
`--beam 4 --prefix-size 2`, `--beam 4 --diverse-beam-groups 2 --diverse-beam-strength 0.5` and
`--beam 3 --match-source-len` and `--beam 4 --diversity-rate 0.5`.
With --constraints, each sentence's hypotheses must contain the target phrases of its line of
FILE (tab-separated, in the target dictionary's symbols), read as fairseq-interactive reads the
phrases after a source (encode_line without </s>, pack_constraints);
fairseq_prenorm.{ordered,unordered}.hypotheses are its H- lines with `--beam 4` and
fairseq_prenorm.constraints.
"""
import argparse
import math

import torch
from fairseq import checkpoint_utils, search
from fairseq.data import Dictionary
from fairseq.data.indexed_dataset import MMapIndexedDataset
from fairseq.models.lightconv import LightConvModel
from fairseq.models.transformer import TransformerModel
from fairseq.sequence_generator import SequenceGenerator
from fairseq.token_generation_constraints import pack_constraints

parser = argparse.ArgumentParser()
for positional in ("folder", "data", "split"):
    parser.add_argument(positional)
parser.add_argument("--beam", type=int, default=5)
parser.add_argument("--lenpen", type=float, default=1.0)
parser.add_argument("--prefix-size", type=int, default=0)
parser.add_argument("--diverse-beam-groups", type=int, default=-1)
parser.add_argument("--diverse-beam-strength", type=float, default=0.5)
parser.add_argument("--match-source-len", action="store_true")
parser.add_argument("--diversity-rate", type=float, default=-1.0)
parser.add_argument("--constraints", choices=["ordered", "unordered"])
parser.add_argument("--constraints-file")
flags = parser.parse_args()

state = torch.load(flags.folder + "/model.pt")
checkpoint_utils.convert_namespace_to_omegaconf = lambda args: None  # hydra is not installed here
state = checkpoint_utils._upgrade_state_dict(state)
args = state["args"]
src = Dictionary.load(f"{flags.folder}/dict.{args.source_lang}.txt")
tgt = Dictionary.load(f"{flags.folder}/dict.{args.target_lang}.txt")


class Task:
    source_dictionary, target_dictionary = src, tgt


model = (TransformerModel if args.arch.startswith("transformer") else LightConvModel).build_model(args, Task())
model.load_state_dict(state["model"], strict=True)
model.eval()
# As fairseq_task.build_generator chooses the search strategy.
strategy = None
if flags.diverse_beam_groups > 0:
    strategy = search.DiverseBeamSearch(tgt, flags.diverse_beam_groups, flags.diverse_beam_strength)
elif flags.match_source_len:
    strategy = search.LengthConstrainedBeamSearch(tgt, min_len_a=1, min_len_b=0, max_len_a=1, max_len_b=0)
elif flags.diversity_rate > -1:
    strategy = search.DiverseSiblingsSearch(tgt, flags.diversity_rate)
elif flags.constraints:
    strategy = search.LexicallyConstrainedBeamSearch(tgt, flags.constraints)
    phrases = [line.rstrip("\n").split("\t") for line in open(flags.constraints_file, encoding="utf-8")]
generator = SequenceGenerator([model], tgt, beam_size=flags.beam, len_penalty=flags.lenpen,
                              match_source_len=flags.match_source_len, search_strategy=strategy)
pair = f"{args.source_lang}-{args.target_lang}"
sources = MMapIndexedDataset(f"{flags.data}/{flags.split}.{pair}.{args.source_lang}")
targets = MMapIndexedDataset(f"{flags.data}/{flags.split}.{pair}.{args.target_lang}")
for i in range(len(sources)):
    s = sources[i].long().unsqueeze(0)
    t = targets[i].long().unsqueeze(0)
    prev = torch.cat([torch.tensor([[tgt.eos()]]), t[:, :-1]], dim=1)
    net_input = {"src_tokens": s, "src_lengths": torch.tensor([s.size(1)])}
    prefix = t[:, : flags.prefix_size] if flags.prefix_size > 0 else None
    with torch.no_grad():
        lprobs = model.get_normalized_probs(model(s, torch.tensor([s.size(1)]), prev), log_probs=True)
        constraints = None
        if flags.constraints:
            constraints = pack_constraints(
                [[tgt.encode_line(p, append_eos=False, add_if_not_exist=False) for p in phrases[i] if p]])
        hypo = generator.generate([model], {"net_input": net_input}, prefix_tokens=prefix,
                                  constraints=constraints)[0][0]
    scores = lprobs.gather(2, t.unsqueeze(2)).squeeze(2).squeeze(0) / math.log(2)
    print("P-%d\t%s" % (i, " ".join("%.4f" % x for x in scores.tolist())))
    print("H-%d\t%s\t%s" % (i, hypo["score"].item() / math.log(2), tgt.string(hypo["tokens"])))
