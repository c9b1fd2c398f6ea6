"""fairseq_prenorm.pt: a Transformer built and saved by fairseq itself (3d262bb; PyTorch 1.13.1),
pre-norm, 2+2 layers of width 16, on ../data-bin's dictionaries, its weights moved off fairseq's
initial values; fairseq_prenorm.scores: fairseq's own base-2 log-probabilities of each valid
reference token (the P- lines of `generate --score-reference`). Run from this folder with
fairseq importable (its optional dependencies stubbed) and dict.en.txt, dict.de.txt copied here:
    python3 make_fairseq_prenorm.py
"""
import argparse, math, torch
from fairseq.data import Dictionary
from fairseq.data.indexed_dataset import MMapIndexedDataset
from fairseq.models.transformer import TransformerModel
from fairseq.models.transformer.transformer_legacy import base_architecture

torch.manual_seed(3)
src, tgt = Dictionary.load("dict.en.txt"), Dictionary.load("dict.de.txt")
class Task:
    source_dictionary, target_dictionary = src, tgt
args = argparse.Namespace(arch="transformer", encoder_embed_dim=16, decoder_embed_dim=16, encoder_ffn_embed_dim=32,
                          decoder_ffn_embed_dim=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                          decoder_attention_heads=2, encoder_normalize_before=True, decoder_normalize_before=True,
                          dropout=0.1, source_lang="en", target_lang="de", max_source_positions=1024,
                          max_target_positions=1024, task="translation", data="data-bin")
base_architecture(args)
model = TransformerModel.build_model(args, Task())
with torch.no_grad():  # weights away from fairseq's init zeros (biases, LayerNorm) so every one counts
    for p in model.parameters():
        p.add_(torch.randn_like(p) * 0.05)
model.eval()
torch.save({"args": args, "model": model.state_dict(), "optimizer_history": [], "extra_state": {"epoch": 1}},
           "fairseq_prenorm.pt")
data = "../data-bin/"
sources = MMapIndexedDataset(data + "valid.en-de.en")
targets = MMapIndexedDataset(data + "valid.en-de.de")
with open("fairseq_prenorm.scores", "w") as out:
    for i in range(len(sources)):
        s = sources[i].long().unsqueeze(0)
        t = targets[i].long().unsqueeze(0)
        prev = torch.cat([torch.tensor([[tgt.eos()]]), t[:, :-1]], dim=1)
        with torch.no_grad():
            net = model(s, torch.tensor([s.size(1)]), prev)
            lprobs = model.get_normalized_probs(net, log_probs=True)
        scores = lprobs.gather(2, t.unsqueeze(2)).squeeze() / math.log(2)
        out.write("P-%d\t%s\n" % (i, " ".join("%.4f" % x for x in scores.tolist())))
