"""Loads a model.pt that `attnlab export-fairseq --with-optimizer-state` wrote as fairseq's trainer
restores a checkpoint: the model built from its args and loaded with strict=True, the optimizer
(FairseqAdam or FairseqNAG) built over model.parameters() as fairseq's Trainer builds it, the
checks its load_checkpoint makes (criterion and optimizer names), torch's load_state_dict of
last_optimizer_state; then compares every state tensor with attnlab's optimizer file under the
parameter's name, and takes one optimizer step with a fixed gradient, compared with the same
step computed here from attnlab's state:
    python3 check_export_optimizer.py DIR ATTNLAB_OPTIMIZER_FILE
"""
import json, math, struct, sys
import numpy as np
import torch
from fairseq import checkpoint_utils
from fairseq.data import Dictionary
from fairseq.models.lightconv import LightConvModel
from fairseq.models.transformer import TransformerModel
from fairseq.optim.adam import FairseqAdam
from fairseq.optim.nag import FairseqNAG

folder, optimizer_file = sys.argv[1], sys.argv[2]
state = torch.load(folder + "/model.pt")
checkpoint_utils.convert_namespace_to_omegaconf = lambda args: None  # hydra is not installed here
state = checkpoint_utils._upgrade_state_dict(state)
args = state["args"]
src = Dictionary.load(f"{folder}/dict.{args.source_lang}.txt")
tgt = Dictionary.load(f"{folder}/dict.{args.target_lang}.txt")
class Task: source_dictionary, target_dictionary = src, tgt
model = (TransformerModel if args.arch.startswith("transformer") else LightConvModel).build_model(args, Task())
model.load_state_dict(state["model"], strict=True)

def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n)); data = f.read()
    kinds = {"F32": np.float32, "F64": np.float64, "I64": np.int64}
    return {k: np.frombuffer(data[v["data_offsets"][0]:v["data_offsets"][1]], kinds[v["dtype"]]).reshape(v["shape"])
            for k, v in header.items() if k != "__metadata__"}
attnlab = read_safetensors(optimizer_file)

history = state["optimizer_history"][-1]
last = state["last_optimizer_state"]
names = [n for n, p in model.named_parameters()]
params = [p for n, p in model.named_parameters()]
group = last["param_groups"][0]
if history["optimizer_name"] == "FairseqAdam":
    class Cfg: lr = [group["lr"]]; adam_betas = str(tuple(group["betas"])); adam_eps = group["eps"]; weight_decay = group["weight_decay"]; use_old_adam = False; fp16_adam_stats = False
    optimizer = FairseqAdam(Cfg(), params)
else:
    class Cfg: lr = [group["lr"]]; momentum = group["momentum"]; weight_decay = group["weight_decay"]
    optimizer = FairseqNAG(Cfg(), params)
assert history["optimizer_name"] == optimizer.__class__.__name__, history["optimizer_name"]
assert history["criterion_name"] == "LabelSmoothedCrossEntropyCriterion", history["criterion_name"]
optimizer.load_state_dict(last)  # as Trainer.load_checkpoint, no overrides

def attnlab_state(name, slot):
    tied = [n for n, t in state["model"].items() if t.data_ptr() == state["model"][name].data_ptr()]
    for candidate in tied:
        key = f"state.{candidate}.{slot}"
        for attnlab_name in (key, key.replace("layer_norm1", "layer_norms.0").replace("layer_norm2", "layer_norms.1")):
            if attnlab_name in attnlab: return attnlab[attnlab_name]
    return None

checked = 0
for name, p in zip(names, params):
    s = optimizer.optimizer.state.get(p, {})
    for slot, value in s.items():
        if slot == "step":
            assert value == attnlab_state(name, "step"), (name, value)
            continue
        expected = attnlab_state(name, slot)
        assert expected is not None, (name, slot)
        assert tuple(value.shape) == tuple(p.shape), (name, slot, value.shape, p.shape)
        assert np.array_equal(value.numpy(), expected), (name, slot)
        checked += 1
print(f"{len(params)} parameters, {checked} state tensors equal to attnlab's, step counts equal")

# One step with the gradient g = 1e-3 * (i + 1) * sin(arange) for parameter i, against the same step from attnlab's state.
before = [p.detach().clone() for p in params]
grads = []
for i, p in enumerate(params):
    g = (1e-3 * (i + 1) * torch.sin(torch.arange(p.numel(), dtype=torch.float64))).float().view_as(p)
    p.grad = g.clone(); grads.append(g.double().numpy())
lr = group["lr"]
optimizer.set_lr(lr)
optimizer.step()
worst = 0.0
for i, (name, p) in enumerate(zip(names, params)):
    theta, g = before[i].double().numpy(), grads[i]
    if history["optimizer_name"] == "FairseqAdam":
        b1, b2 = group["betas"]; eps = group["eps"]; wd = group["weight_decay"]
        step = attnlab_state(name, "step"); m = attnlab_state(name, "exp_avg"); v = attnlab_state(name, "exp_avg_sq")
        t = (int(step) if step is not None else 0) + 1
        m = np.zeros_like(theta) if m is None or t == 1 else m.astype(np.float64)
        v = np.zeros_like(theta) if v is None or t == 1 else v.astype(np.float64)
        m = b1 * m + (1 - b1) * g; v = b2 * v + (1 - b2) * g * g
        if wd: theta = theta - lr * wd * theta
        theta = theta - lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
    else:
        mu = group["momentum"]; wd = group["weight_decay"]; r = lr / group["lr_old"]
        b = attnlab_state(name, "momentum_buffer"); b = np.zeros_like(theta) if b is None else b.astype(np.float64)
        if wd: theta = theta * (1 - lr * wd)
        theta = theta + mu * mu * r * b - (1 + mu) * lr * g
    worst = max(worst, float(np.max(np.abs(p.detach().double().numpy() - theta))))
print(f"one step: largest difference from the step computed from attnlab's state {worst:.2e}")
assert worst < 1e-6
