"""fairseq_sentence_bleu_expected.txt: what fairseq-score --sentence-bleu --sys hyp.tok --ref ref.tok
prints with fairseq 3d262bb's own code for it (score.py's sentence branch, libbleu built from
fairseq/clib/libbleu), with the Scorer built as its corpus branch builds it: as it is, the
branch passes the arguments of an older Scorer and stops with a TypeError.
    python3 fairseq_sentence_bleu.py hyp.tok ref.tok > fairseq_sentence_bleu_expected.txt
"""
import sys

from fairseq.data import dictionary
from fairseq.scoring import bleu

d = dictionary.Dictionary()
scorer = bleu.Scorer(bleu.BleuConfig(pad=d.pad(), eos=d.eos(), unk=d.unk()))
with open(sys.argv[1]) as fdsys, open(sys.argv[2]) as fdref:
    for i, (sys_tok, ref_tok) in enumerate(zip(fdsys.readlines(), fdref.readlines())):
        scorer.reset(one_init=True)
        scorer.add(d.encode_line(ref_tok), d.encode_line(sys_tok))
        print(i, scorer.result_string(4))
