"""Writes trainer_adam.pt: a checkpoint as fairseq's Trainer.save_checkpoint writes it, with the
state of its own optimizer (FairseqAdam, betas (0.9, 0.98), weight decay 0.01) after three steps
with fixed gradients, for the model of MODEL_DIR/model.pt (the one-layer, width-16 pre-norm
Transformer with a tied output matrix that tests/apps/test_cli.cpp exports, on ../data-bin):
    python3 make_trainer_checkpoint.py MODEL_DIR trainer_adam.pt
and trainer_adam_legacy.pt, the same in torch.save's legacy layout (one pickle stream, which
tests/apps/test_mutations.cpp mutates: the zip layout's checksums stop most mutants early).
"""
import sys
import torch
from fairseq import checkpoint_utils
from fairseq.data import Dictionary
from fairseq.models.transformer import TransformerModel
from fairseq.optim.adam import FairseqAdam

folder, out = sys.argv[1], sys.argv[2]
state = torch.load(folder + "/model.pt")
checkpoint_utils.convert_namespace_to_omegaconf = lambda args: None  # hydra is not installed here
state = checkpoint_utils._upgrade_state_dict(state)
args = state["args"]
args.data = "../data-bin"  # the export records its own training's data dir; this one names no machine's path
class Task:
    source_dictionary = Dictionary.load(f"{folder}/dict.{args.source_lang}.txt")
    target_dictionary = Dictionary.load(f"{folder}/dict.{args.target_lang}.txt")
model = TransformerModel.build_model(args, Task())
model.load_state_dict(state["model"], strict=True)
class Cfg:
    lr = [0.002]; adam_betas = "(0.9, 0.98)"; adam_eps = 1e-8; weight_decay = 0.01; use_old_adam = False
    fp16_adam_stats = False
params = list(model.parameters())
optimizer = FairseqAdam(Cfg(), params)
for step in range(3):
    for i, p in enumerate(params):
        p.grad = (1e-3 * (i + 1 + step) * torch.sin(torch.arange(p.numel(), dtype=torch.float64))).float().view_as(p)
    optimizer.step()
checkpoint = {"args": args, "model": model.state_dict(),
              "optimizer_history": [{"criterion_name": "LabelSmoothedCrossEntropyCriterion",
                                     "optimizer_name": "FairseqAdam", "lr_scheduler_state": {"best": None},
                                     "num_updates": 3}],
              "extra_state": {"train_iterator": {"epoch": 1, "iterations_in_epoch": 3}},
              "last_optimizer_state": optimizer.state_dict()}
torch.save(checkpoint, out)
torch.save(checkpoint, out.replace(".pt", "_legacy.pt"), _use_new_zipfile_serialization=False)
