"""Writes fairseq-style checkpoints of reference.safetensors, as torch.save writes them (a model
that fairseq itself saved: make_fairseq_models.py).

reference.safetensors: the weights of an attnlab run on ../data-bin (transformer_tiny narrowed
to D 16, FFN 32, 2 heads, 1 encoder and 2 decoder layers, 3 updates), under fairseq's names.
Made with PyTorch 1.13.1 (Debian's python3-torch), run from this folder:
    python3 make_checkpoints.py
* zip_args.pt: torch's zip format; "args" an argparse.Namespace, as fairseq <= 0.10 saved it;
  float32 weights with fairseq's buffers (encoder.version, decoder.version,
  *.embed_positions._float_tensor) and a small optimizer state.
* zip_cfg_half.pt: zip format; "args" None and "cfg" a dict whose "model" is a Namespace and
  whose "task" names the languages, as fairseq 0.12 saves it; the weights in float16.
* legacy.pt: torch's legacy (pre-1.6) format, as fairseq's published 2018-2019 models;
  fairseq 0.5's names: attention's q, k, v stacked as in_proj_weight / in_proj_bias, each
  layer's LayerNorms as layer_norms.N, the decoder's output matrix as decoder.embed_out, and
  relu_dropout in place of activation_dropout.
* zip_cfg_nested_bf16.pt: zip format; "cfg" whose "model" is the nested dict of fairseq 0.12's
  dataclass configuration ("encoder": {"embed_dim": ...}, ...); the weights in bfloat16.
* gelu.pt: zip format, "args" with activation_fn "gelu" (a model attnlab does not build) and no
  weights.
"""
import argparse
import collections
import json
import struct

import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = collections.OrderedDict()
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32"
        begin, end = info["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32).reshape(info["shape"]).clone()
    return tensors


def hyperparameters(**changes):
    fields = dict(
        arch="transformer", task="translation", data="data-bin", source_lang="en", target_lang="de",
        encoder_embed_dim=16, encoder_ffn_embed_dim=32, encoder_layers=1, encoder_attention_heads=2,
        encoder_normalize_before=False, encoder_learned_pos=False, decoder_embed_dim=16,
        decoder_ffn_embed_dim=32, decoder_layers=2, decoder_attention_heads=2, decoder_normalize_before=False,
        decoder_learned_pos=False, attention_dropout=0.0, activation_dropout=0.0, activation_fn="relu",
        dropout=0.1, adaptive_softmax_cutoff=None, adaptive_softmax_dropout=0,
        share_decoder_input_output_embed=False, share_all_embeddings=False, no_token_positional_embeddings=False,
        adaptive_input=False, no_cross_attention=False, cross_self_attention=False, decoder_output_dim=16,
        decoder_input_dim=16, no_scale_embedding=False, layernorm_embedding=False, tie_adaptive_weights=False,
        encoder_layers_to_keep=None, decoder_layers_to_keep=None, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
        quant_noise_pq=0.0, max_source_positions=1024, max_target_positions=1024, lr=[0.001],
        adam_betas="(0.9, 0.98)", seed=1)
    fields.update(changes)
    return argparse.Namespace(**{k: v for k, v in fields.items() if v is not argparse.SUPPRESS})


def with_buffers(weights, decoder_version):
    state = collections.OrderedDict(weights)
    state["encoder.version"] = torch.Tensor([3])
    state["decoder.version"] = torch.Tensor([decoder_version])
    state["encoder.embed_positions._float_tensor"] = torch.FloatTensor(1)
    state["decoder.embed_positions._float_tensor"] = torch.FloatTensor(1)
    return state


def old_names(weights):
    state = collections.OrderedDict()
    renamed = {"self_attn_layer_norm": "layer_norms.0", "final_layer_norm": None, "encoder_attn_layer_norm": "layer_norms.1"}
    for name, tensor in weights.items():
        if any(p in name for p in ("q_proj", "k_proj", "v_proj")):
            if "q_proj" in name:
                prefix, part = name.split("q_proj.")
                state[prefix + "in_proj_" + part] = torch.cat(
                    [weights[prefix + p + "." + part] for p in ("q_proj", "k_proj", "v_proj")])
            continue
        for new, old in renamed.items():
            if "." + new + "." in name:
                if new == "final_layer_norm":
                    old = "layer_norms.2" if name.startswith("decoder.") else "layer_norms.1"
                name = name.replace(new, old)
        if name == "decoder.output_projection.weight":
            name = "decoder.embed_out"
        state[name] = tensor
    return state


def checkpoint(args, cfg, model):
    step = torch.tensor(3.0)
    return {
        "args": args, "cfg": cfg, "model": model, "criterion": None,
        "optimizer_history": [{"criterion_name": "LabelSmoothedCrossEntropyCriterion",
                               "optimizer_name": "FairseqAdam", "lr_scheduler_state": {"best": 8.299},
                               "num_updates": 3}],
        "task_state": {},
        "extra_state": {"epoch": 1, "val_loss": 8.299, "train_iterator": {"epoch": 1, "iterations_in_epoch": 3,
                        "shuffle": True}, "previous_training_time": 0.25, "metrics": {}},
        "last_optimizer_state": {"state": {0: {"step": step, "exp_avg": torch.zeros(4, dtype=torch.float64)}},
                                 "param_groups": [{"lr": 0.001, "betas": (0.9, 0.98), "eps": 1e-8,
                                                   "weight_decay": 0.0, "params": [0]}]},
    }


weights = read_safetensors("reference.safetensors")
torch.save(checkpoint(hyperparameters(), None, with_buffers(weights, 3)), "zip_args.pt")
half = collections.OrderedDict((k, v.half()) for k, v in with_buffers(weights, 3).items())
cfg = {"_name": None, "common": {"fp16": True, "seed": 1}, "model": hyperparameters(source_lang=argparse.SUPPRESS,
       target_lang=argparse.SUPPRESS, task=argparse.SUPPRESS, data=argparse.SUPPRESS),
       "task": {"_name": "translation", "data": "data-bin", "source_lang": "en", "target_lang": "de"}}
torch.save(checkpoint(None, cfg, half), "zip_cfg_half.pt")
legacy_args = hyperparameters(activation_dropout=argparse.SUPPRESS, relu_dropout=0.0)
torch.save(checkpoint(legacy_args, None, with_buffers(old_names(weights), 2)), "legacy.pt",
           _use_new_zipfile_serialization=False)
torch.save(checkpoint(hyperparameters(activation_fn="gelu"), None, collections.OrderedDict()), "gelu.pt")

def nested(args):
    flat = vars(args)
    model = {"_name": "transformer"}
    for key, value in flat.items():
        side = key.split("_")[0]
        if side in ("encoder", "decoder") and key not in ("encoder_layerdrop", "decoder_layerdrop"):
            model.setdefault(side, {})[key[len(side) + 1:]] = value
        elif key not in ("arch", "task", "data", "source_lang", "target_lang", "lr", "adam_betas", "seed"):
            model[key] = value
    return model


bf16 = collections.OrderedDict((k, v.to(torch.bfloat16)) for k, v in with_buffers(weights, 3).items())
torch.save(checkpoint(None, {"model": nested(hyperparameters()), "task": cfg["task"]}, bf16), "zip_cfg_nested_bf16.pt")
