"""train.align: made-up word alignments of ../data-bin-text/train (each source word j aligned to
target word round(j*m/n), plus n//4 random pairs, seed 7), in fast_align's "i-j" format.
alignment.en-de.txt: the alignment dictionary fairseq-preprocess --alignfile train.align makes
of it with fairseq 3d262bb's _align_files, run with the word ids as Python ints: as it is, the
ids are 0-d tensors, which hash by identity, so its "most frequent target" dict keeps every
aligned pair of the corpus apart and the file lists each occurrence (4,905 lines here, where
196 source words were aligned).
    python3 make_alignment_files.py FAIRSEQ_DATA_BIN_OF_TRAIN   # for dict.en.txt, dict.de.txt
"""
import random
import sys
from argparse import Namespace

import fairseq_cli.preprocess as preprocess
from fairseq.data import Dictionary

random.seed(7)
src = open("../data-bin-text/train.en", encoding="utf-8").read().splitlines()
tgt = open("../data-bin-text/train.de", encoding="utf-8").read().splitlines()
lines = []
for s, t in zip(src, tgt):
    n, m = len(s.split()), len(t.split())
    pairs = {(j, min(m - 1, round(j * m / n))) for j in range(n)}
    for _ in range(n // 4):
        pairs.add((random.randrange(n), random.randrange(m)))
    lines.append(" ".join(f"{a}-{b}" for a, b in sorted(pairs)))
open("train.align", "w", encoding="utf-8").write("\n".join(lines) + "\n")

dictionaries = []
for lang in ("en", "de"):
    dictionary = Dictionary.load(f"{sys.argv[1]}/dict.{lang}.txt")
    encode = dictionary.encode_line
    dictionary.encode_line = lambda line, encode=encode, **kwargs: [int(i) for i in encode(line, **kwargs)]
    dictionaries.append(dictionary)
args = Namespace(trainpref="../data-bin-text/train", source_lang="en", target_lang="de", alignfile="train.align",
                 destdir=".")
preprocess._align_files(args, *dictionaries)
