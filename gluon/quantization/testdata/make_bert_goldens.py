#!/usr/bin/python3
"""Goldens for gluon/quantization's TestQuantizeBert: PyTorch's dynamic int8
quantization of the text package's tiny BERT classifier.

The model is the plain-torch BERT of gluon/model/text/testdata/
make_bert_goldens.py (which see: Hugging Face's BertForSequenceClassification
in eval mode, post-LN, exact GELU, the mask's (1 - mask) * finfo.min),
written here as modules so that its projections are nn.Linear layers that
quantize_dynamic can replace: per encoder layer query, key, value,
attention.output.dense, intermediate.dense and output.dense, then
bert.pooler.dense and classifier — 14 layers, named as in the state dict.
Its layer norm and GELU are that script's functions (imported), and before
anything is written its float32 logits are checked against that script's
functional bert() on the same weights.

The weights are gluon/model/text/testdata/bert_tiny_cls.bin (torch.load;
the state dict that script saved, the file TestQuantizeBert loads). The
inputs are the test's: ids [[2 40 41 42 43 3] [2 44 45 3 0 0]], token
types 0, mask 1 but on the second sequence's last two positions.

Written to bert_goldens.json: the float32 logits (and, for reference, the
functional version's in float64), the logits of
torch.ao.quantization.quantize_dynamic(model, {nn.Linear},
dtype=torch.qint8) (default_dynamic_qconfig: weights symmetric per tensor;
activations per call, over the whole input — [B, T, H] for the encoder's
layers, [B, H] for the pooler and classifier — with reduce_range), and for
each quantized layer, as the quantized model ran it: its name, its weight
scale, its input and that input's scale and zero point
(torch._choose_qparams_per_tensor, what the quantized Linear computes),
and its output. Values are float32 written in 9 digits.

Run with Debian's /usr/bin/python3 (python3-torch 1.13; engine onednn, no
fbgemm) from the repository root:

    /usr/bin/python3 gluon/quantization/testdata/make_bert_goldens.py
"""
import importlib.util
import json
import math
import os

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = os.path.join(HERE, "..", "..", "model", "text", "testdata")
# The text package's script, by path: it has this script's file name.
_spec = importlib.util.spec_from_file_location("text_bert_goldens", os.path.join(TEXT, "make_bert_goldens.py"))
text_bert = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(text_bert)
CFG, bert, gelu, layer_norm, linear = text_bert.CFG, text_bert.bert, text_bert.gelu, text_bert.layer_norm, text_bert.linear


class LayerNorm(nn.Module):
    def __init__(self, h, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.bias = nn.Parameter(torch.zeros(h))
        self.eps = eps

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)


class Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["hidden_size"]
        self.pad = cfg["pad_token_id"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], h, padding_idx=self.pad)
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], h)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], h)
        self.LayerNorm = LayerNorm(h, cfg["layer_norm_eps"])

    def forward(self, ids, types):
        t = ids.shape[1]
        x = (nn.functional.embedding(ids, self.word_embeddings.weight, padding_idx=self.pad)
             + self.position_embeddings.weight[torch.arange(t)]
             + self.token_type_embeddings.weight[types])
        return self.LayerNorm(x)


class SelfAttention(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)


class Output(nn.Module):
    """BertSelfOutput and BertOutput: dense, residual, LayerNorm."""

    def __init__(self, n_in, h, eps):
        super().__init__()
        self.dense = nn.Linear(n_in, h)
        self.LayerNorm = LayerNorm(h, eps)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class Attention(nn.Module):
    def __init__(self, h, eps):
        super().__init__()
        self.self = SelfAttention(h)
        self.output = Output(h, h, eps)


class Intermediate(nn.Module):
    def __init__(self, h, i):
        super().__init__()
        self.dense = nn.Linear(h, i)


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, eps = cfg["hidden_size"], cfg["layer_norm_eps"]
        self.nh = cfg["num_attention_heads"]
        self.attention = Attention(h, eps)
        self.intermediate = Intermediate(h, cfg["intermediate_size"])
        self.output = Output(cfg["intermediate_size"], h, eps)

    def forward(self, x, ext):
        b, t, h = x.shape
        nh, d = self.nh, h // self.nh
        sa = self.attention.self
        q, k, v = [m(x).reshape(b, t, nh, d).transpose(1, 2) for m in (sa.query, sa.key, sa.value)]
        s = q @ k.transpose(-1, -2) / math.sqrt(d) + ext
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, t, h)
        a = self.attention.output(o, x)
        return self.output(gelu(self.intermediate.dense(a)), a)


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList([Layer(cfg) for _ in range(cfg["num_hidden_layers"])])


class Pooler(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.dense = nn.Linear(h, h)


class Bert(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)
        self.pooler = Pooler(cfg["hidden_size"])


class BertForSequenceClassification(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.bert = Bert(cfg)
        self.classifier = nn.Linear(cfg["hidden_size"], cfg["num_labels"])

    def forward(self, ids, types, mask):
        x = self.bert.embeddings(ids, types)
        ext = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.bert.encoder.layer:
            x = layer(x, ext)
        return self.classifier(torch.tanh(self.bert.pooler.dense(x[:, 0])))


def flat(t):
    """float32 values, in 9 digits: enough to read back the same float32."""
    return [float("%.9g" % v) for v in t.detach().float().reshape(-1).tolist()]


def record(model, names, ids, types, mask):
    """The logits, and each named layer's input and output."""
    seen, hooks = {}, []
    mods = dict(model.named_modules())
    for n in names:
        hooks.append(mods[n].register_forward_hook(
            lambda m, args, out, n=n: seen.__setitem__(n, (args[0].detach().clone(), out.detach().clone()))))
    with torch.no_grad():
        logits = model(ids, types, mask)
    for h in hooks:
        h.remove()
    return logits, seen


def main():
    sd = torch.load(os.path.join(TEXT, "bert_tiny_cls.bin"))
    model = BertForSequenceClassification(CFG).eval()
    # strict: every parameter is the file's; token_type_ids is a buffer this module has not.
    model.load_state_dict({k: v for k, v in sd.items() if k != "bert.embeddings.token_type_ids"}, strict=True)

    ids = torch.tensor([[2, 40, 41, 42, 43, 3], [2, 44, 45, 3, 0, 0]])
    types = torch.zeros(2, 6, dtype=torch.int64)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])

    names = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    assert len(names) == 14, names
    flogits, _ = record(model, names, ids, types, mask)

    # The module version computes what the text package's functional one does.
    with torch.no_grad():
        _, pooled = bert(sd, CFG, ids, types, mask)
        ref = linear(sd, "classifier", pooled)
        _, pooled64 = bert({k: v.double() for k, v in sd.items()}, CFG, ids, types, mask)
        ref64 = linear({k: v.double() for k, v in sd.items()}, "classifier", pooled64)
    err = float((flogits - ref).abs().max())
    assert err < 1e-5, err

    qmodel = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    qlogits, qseen = record(qmodel, names, ids, types, mask)
    qmods = dict(qmodel.named_modules())
    layers = []
    for n in names:
        x, y = qseen[n]
        s, z = torch._choose_qparams_per_tensor(x, True)
        w, _ = qmods[n]._packed_params._weight_bias()
        layers.append({"name": n, "shape": list(x.shape), "weight_scale": float(w.q_scale()),
                       "x_scale": float(s), "x_zero": int(z), "x": flat(x), "y": flat(y)})

    out = {"torch": torch.__version__, "engine": torch.backends.quantized.engine,
           "ids": ids.tolist(), "token_types": types.tolist(), "mask": mask.tolist(),
           "logits_float": flat(flogits), "logits_float64": flat(ref64), "logits_int8": flat(qlogits),
           "layers": layers}
    with open(os.path.join(HERE, "bert_goldens.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("engine %s; float32 vs functional %.3g; int8 vs float32 %.4g" % (
        torch.backends.quantized.engine, err, float((qlogits - flogits).abs().max())))
    print("float", flat(flogits))
    print("int8 ", flat(qlogits))


if __name__ == "__main__":
    main()
