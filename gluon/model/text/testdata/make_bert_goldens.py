#!/usr/bin/python3
"""Fixtures and goldens for gluon/model/text's BERT tests.

BERT is written out below in plain torch (Debian's python3-torch; the
transformers package is not needed), computing what Hugging Face's
BertModel, BertForSequenceClassification and BertForMaskedLM compute in
eval mode:

  - embeddings: word (padding_idx pad_token_id) + position (0..T-1) +
    token type, then LayerNorm;
  - each encoder layer, post-LN: query, key and value projections
    (nn.Linear, weight [out, in]), scores q k^T / sqrt(head_dim) plus the
    extended attention mask (1 - mask) * finfo(dtype).min, softmax, the
    heads' outputs concatenated; attention.output.dense, residual,
    LayerNorm; intermediate.dense and exact (erf) GELU; output.dense,
    residual, LayerNorm;
  - pooler: dense and tanh on the first token;
  - sequence classification: classifier on the pooled output, loss the
    cross-entropy;
  - masked LM: cls.predictions.transform (dense, GELU, LayerNorm), then
    the word embedding's transpose plus cls.predictions.bias; loss the
    cross-entropy over the labels that are not -100.

A tiny configuration gets seeded random weights (float32). Two fixtures
are written:

  bert_tiny.safetensors   the layout of the hub's bert-base-uncased
                          checkpoint (BertForPreTraining): bert.* with the
                          older LayerNorm gamma/beta names and the
                          position_ids buffer, cls.predictions.* with the
                          tied decoder.weight and decoder.bias,
                          cls.seq_relationship.*;
  bert_tiny_cls.bin       torch.save of a BertForSequenceClassification
                          state dict (the same encoder, weight/bias names,
                          the token_type_ids buffer, classifier.*), as
                          pytorch_model.bin is.

The goldens (bert_goldens.json) are computed in float64 from those
float32 values, for a batch of two sequences, the second padded (mask 0
on its last three positions), with token types:

  - BertModel's sequence output and pooled output;
  - the classifier's logits, its loss for labels [2, 0] and the loss's
    gradients to five parameters;
  - the masked LM's logits, its loss for labels with -100 at all but five
    positions and the loss's gradients to three parameters (the word
    embedding gets the input's and the tied output's share).

Run from the repository root:
    /usr/bin/python3 gluon/model/text/testdata/make_bert_goldens.py
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools"))
from torch2safetensors import write_safetensors  # noqa: E402

CFG = {
    "vocab_size": 112, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 64, "max_position_embeddings": 16, "type_vocab_size": 2,
    "layer_norm_eps": 1e-12, "pad_token_id": 0, "num_labels": 3,
}


def make_weights(cfg, seed):
    """Seeded random float32 weights under BertForPreTraining's keys (and classifier.*)."""
    g = torch.Generator().manual_seed(seed)
    h, v, p, i = cfg["hidden_size"], cfg["vocab_size"], cfg["max_position_embeddings"], cfg["intermediate_size"]

    def rnd(*shape, std=1.0, mean=0.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * std + mean).float()

    def linear(w, name, n_in, n_out, std):
        w[name + ".weight"] = rnd(n_out, n_in, std=std)
        w[name + ".bias"] = rnd(n_out, std=0.05)

    def norm(w, name):
        w[name + ".weight"] = rnd(h, std=0.1, mean=1.0)
        w[name + ".bias"] = rnd(h, std=0.05)

    w = {}
    word = rnd(v, h, std=0.5)
    word[cfg["pad_token_id"]] = 0  # as _init_weights leaves the padding row
    w["bert.embeddings.word_embeddings.weight"] = word
    w["bert.embeddings.position_embeddings.weight"] = rnd(p, h, std=0.3)
    w["bert.embeddings.token_type_embeddings.weight"] = rnd(cfg["type_vocab_size"], h, std=0.3)
    norm(w, "bert.embeddings.LayerNorm")
    for l in range(cfg["num_hidden_layers"]):
        pre = "bert.encoder.layer.%d." % l
        for n in ("query", "key", "value"):
            linear(w, pre + "attention.self." + n, h, h, 0.25)
        linear(w, pre + "attention.output.dense", h, h, 0.2)
        norm(w, pre + "attention.output.LayerNorm")
        linear(w, pre + "intermediate.dense", h, i, 0.2)
        linear(w, pre + "output.dense", i, h, 0.15)
        norm(w, pre + "output.LayerNorm")
    linear(w, "bert.pooler.dense", h, h, 0.2)
    w["cls.predictions.bias"] = rnd(v, std=0.1)
    linear(w, "cls.predictions.transform.dense", h, h, 0.2)
    norm(w, "cls.predictions.transform.LayerNorm")
    linear(w, "cls.seq_relationship", h, 2, 0.2)
    linear(w, "classifier", h, cfg["num_labels"], 0.3)
    return w


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def linear(w, name, x):
    return x @ w[name + ".weight"].t() + w[name + ".bias"]


def bert(w, cfg, ids, token_types, mask, pool=True):
    """Sequence output [B, T, H] and pooled output [B, H] (eval mode)."""
    eps, nh = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    b, t = ids.shape
    x = (torch.nn.functional.embedding(ids, w["bert.embeddings.word_embeddings.weight"], padding_idx=cfg["pad_token_id"])
         + w["bert.embeddings.position_embeddings.weight"][torch.arange(t)]
         + w["bert.embeddings.token_type_embeddings.weight"][token_types])
    x = layer_norm(x, w["bert.embeddings.LayerNorm.weight"], w["bert.embeddings.LayerNorm.bias"], eps)
    h = x.shape[-1]
    d = h // nh
    ext = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
    for l in range(cfg["num_hidden_layers"]):
        pre = "bert.encoder.layer.%d." % l
        q, k, v = [linear(w, pre + "attention.self." + n, x).reshape(b, t, nh, d).transpose(1, 2)
                   for n in ("query", "key", "value")]
        s = q @ k.transpose(-1, -2) / math.sqrt(d) + ext
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, t, h)
        a = layer_norm(linear(w, pre + "attention.output.dense", o) + x,
                       w[pre + "attention.output.LayerNorm.weight"], w[pre + "attention.output.LayerNorm.bias"], eps)
        f = gelu(linear(w, pre + "intermediate.dense", a))
        x = layer_norm(linear(w, pre + "output.dense", f) + a,
                       w[pre + "output.LayerNorm.weight"], w[pre + "output.LayerNorm.bias"], eps)
    pooled = torch.tanh(linear(w, "bert.pooler.dense", x[:, 0])) if pool else None
    return x, pooled


def mlm_logits(w, cfg, seq):
    h = gelu(linear(w, "cls.predictions.transform.dense", seq))
    h = layer_norm(h, w["cls.predictions.transform.LayerNorm.weight"], w["cls.predictions.transform.LayerNorm.bias"],
                   cfg["layer_norm_eps"])
    return h @ w["bert.embeddings.word_embeddings.weight"].t() + w["cls.predictions.bias"]


def enc(t):
    t = t.detach().double()
    return {"shape": list(t.shape), "data": [float("%.10g" % x) for x in t.reshape(-1).tolist()]}


def pretraining_file(weights):
    """bert-base-uncased's layout: gamma/beta, position_ids, tied decoder tensors, no classifier."""
    out = {}
    for k, v in weights.items():
        if k.startswith("classifier."):
            continue
        if ".LayerNorm." in k:
            k = k.replace(".LayerNorm.weight", ".LayerNorm.gamma").replace(".LayerNorm.bias", ".LayerNorm.beta")
        out[k] = v
    out["cls.predictions.decoder.weight"] = weights["bert.embeddings.word_embeddings.weight"].clone()
    out["cls.predictions.decoder.bias"] = weights["cls.predictions.bias"].clone()
    out["bert.embeddings.position_ids"] = torch.arange(CFG["max_position_embeddings"]).view(1, -1)
    return out


def classifier_file(weights):
    """BertForSequenceClassification.state_dict() with the token_type_ids buffer."""
    out = {k: v for k, v in weights.items() if k.startswith("bert.") or k.startswith("classifier.")}
    out["bert.embeddings.token_type_ids"] = torch.zeros(1, CFG["max_position_embeddings"], dtype=torch.int64)
    return out


def main():
    weights = make_weights(CFG, seed=20240612)
    write_safetensors(os.path.join(HERE, "bert_tiny.safetensors"), pretraining_file(weights), {"format": "pt"})
    torch.save(classifier_file(weights), os.path.join(HERE, "bert_tiny_cls.bin"))

    ids = torch.tensor([[2, 17, 45, 3, 88, 9, 61, 33, 3, 70],
                        [2, 54, 12, 96, 3, 41, 3, 0, 0, 0]])
    types = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
                          [0, 0, 0, 0, 0, 1, 1, 0, 0, 0]])
    mask = torch.tensor([[1] * 10, [1] * 7 + [0] * 3])
    cls_labels = torch.tensor([2, 0])
    mlm_labels = torch.full((2, 10), -100)
    for b, t in [(0, 1), (0, 4), (0, 7), (1, 2), (1, 5)]:
        mlm_labels[b, t] = ids[b, t]

    w64 = {k: v.double().requires_grad_() for k, v in weights.items()}
    seq, pooled = bert(w64, CFG, ids, types, mask)
    cls_logits = linear(w64, "classifier", pooled)
    cls_loss = torch.nn.functional.cross_entropy(cls_logits, cls_labels)
    cls_names = ["bert.embeddings.word_embeddings.weight", "bert.encoder.layer.0.attention.self.query.weight",
                 "bert.encoder.layer.1.output.LayerNorm.weight", "bert.pooler.dense.weight", "classifier.weight"]
    cls_grads = torch.autograd.grad(cls_loss, [w64[n] for n in cls_names])

    mseq, _ = bert(w64, CFG, ids, types, mask, pool=False)
    logits = mlm_logits(w64, CFG, mseq)
    mlm_loss = torch.nn.functional.cross_entropy(logits.reshape(-1, CFG["vocab_size"]), mlm_labels.reshape(-1))
    mlm_names = ["bert.embeddings.word_embeddings.weight", "cls.predictions.bias", "cls.predictions.transform.dense.weight"]
    mlm_grads = torch.autograd.grad(mlm_loss, [w64[n] for n in mlm_names])

    out = {
        "config": CFG,
        "ids": ids.tolist(), "token_types": types.tolist(), "mask": mask.tolist(),
        "sequence": enc(seq), "pooled": enc(pooled),
        "cls_labels": cls_labels.tolist(), "cls_logits": enc(cls_logits), "cls_loss": float(cls_loss),
        "cls_grads": {n: enc(g) for n, g in zip(cls_names, cls_grads)},
        "mlm_labels": mlm_labels.tolist(), "mlm_logits": enc(logits), "mlm_loss": float(mlm_loss),
        "mlm_grads": {n: enc(g) for n, g in zip(mlm_names, mlm_grads)},
    }
    with open(os.path.join(HERE, "bert_goldens.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("classification loss %.6f, masked-LM loss %.6f" % (float(cls_loss), float(mlm_loss)))


if __name__ == "__main__":
    main()
