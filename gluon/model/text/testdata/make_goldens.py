#!/usr/bin/python3
"""Fixture and goldens for gluon/model/text's GPT-2 tests.

GPT-2 is written out below in plain torch (Debian's python3-torch; the
transformers package is not needed), computing what Hugging Face's
GPT2LMHeadModel computes in eval mode: token plus position embeddings,
pre-LN blocks (LayerNorm, self-attention through the fused c_attn
projection with a causal mask and scores divided by sqrt(head_dim),
c_proj, residual; LayerNorm, c_fc, gelu_new, c_proj, residual), the final
ln_f and a head tied to wte. The Conv1D layers hold their weights as
[in, out] and compute x @ W + b.

A tiny configuration gets seeded random weights (float32, saved in the
safetensors layout of GPT2LMHeadModel.state_dict(): transformer.* keys,
lm_head.weight equal to transformer.wte.weight and the attn.bias and
attn.masked_bias buffers of older transformers versions). The goldens are
computed in float64 from those float32 values:

  - the logits of a batch of two sequences,
  - the loss of labels equal to the inputs (the shifted cross-entropy,
    averaged over the predicted positions),
  - the gradients of that loss to transformer.wte.weight,
    transformer.h.0.attn.c_attn.weight and transformer.ln_f.weight,
  - the greedy continuation of a prompt by 8 tokens (each step the whole
    sequence again, no cache), and the smallest gap between the best and
    second best logit on the way, so that float32 cannot flip a choice,
  - the logits of the batch under config.json's scale_attn_weights false
    and scale_attn_by_inverse_layer_idx true, alone and together
    (attn_variants).

Run from the repository root:
    /usr/bin/python3 gluon/model/text/testdata/make_goldens.py
It writes gluon/model/text/testdata/gpt2_tiny.safetensors and goldens.json.
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools"))
from torch2safetensors import write_safetensors  # noqa: E402

CFG = {"vocab_size": 97, "n_positions": 32, "n_embd": 48, "n_layer": 2, "n_head": 4, "layer_norm_epsilon": 1e-5}


def make_weights(cfg, seed):
    """Seeded random float32 weights under GPT2LMHeadModel's keys."""
    g = torch.Generator().manual_seed(seed)
    e, v, p = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]

    def rnd(*shape, std=1.0, mean=0.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * std + mean).float()

    w = {"transformer.wte.weight": rnd(v, e, std=0.3), "transformer.wpe.weight": rnd(p, e, std=0.5)}
    for i in range(cfg["n_layer"]):
        h = "transformer.h.%d." % i
        w[h + "ln_1.weight"] = rnd(e, std=0.1, mean=1.0)
        w[h + "ln_1.bias"] = rnd(e, std=0.05)
        w[h + "attn.c_attn.weight"] = rnd(e, 3 * e, std=0.15)
        w[h + "attn.c_attn.bias"] = rnd(3 * e, std=0.05)
        w[h + "attn.c_proj.weight"] = rnd(e, e, std=0.3)
        w[h + "attn.c_proj.bias"] = rnd(e, std=0.05)
        w[h + "ln_2.weight"] = rnd(e, std=0.1, mean=1.0)
        w[h + "ln_2.bias"] = rnd(e, std=0.05)
        w[h + "mlp.c_fc.weight"] = rnd(e, 4 * e, std=0.15)
        w[h + "mlp.c_fc.bias"] = rnd(4 * e, std=0.05)
        w[h + "mlp.c_proj.weight"] = rnd(4 * e, e, std=0.3)
        w[h + "mlp.c_proj.bias"] = rnd(e, std=0.05)
    w["transformer.ln_f.weight"] = rnd(e, std=0.1, mean=1.0)
    w["transformer.ln_f.bias"] = rnd(e, std=0.05)
    return w


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gpt2_logits(w, cfg, ids, scale_attn_weights=True, scale_attn_by_inverse_layer_idx=False):
    """Logits [B, T, V] of token ids [B, T] (eval mode).

    The two flags are transformers' GPT2Config fields of those names, as
    GPT2Attention._attn applies them: the scores q @ k^T divided by
    sqrt(head_dim) when scale_attn_weights, then by layer_idx + 1 when
    scale_attn_by_inverse_layer_idx.
    """
    eps, nh = cfg["layer_norm_epsilon"], cfg["n_head"]
    b, t = ids.shape
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][torch.arange(t)]
    e = x.shape[-1]
    d = e // nh
    keep = torch.tril(torch.ones(t, t, dtype=torch.bool))
    for i in range(cfg["n_layer"]):
        h = "transformer.h.%d." % i
        a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps)
        qkv = a @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
        q, k, v = qkv.split(e, dim=-1)
        q, k, v = [z.reshape(b, t, nh, d).transpose(1, 2) for z in (q, k, v)]
        s = q @ k.transpose(-1, -2)
        if scale_attn_weights:
            s = s / math.sqrt(d)
        if scale_attn_by_inverse_layer_idx:
            s = s / float(i + 1)
        s = torch.where(keep, s, torch.tensor(torch.finfo(s.dtype).min, dtype=s.dtype))
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, t, e)
        x = x + (o @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"])
        m = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps)
        m = gelu_new(m @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"])
        x = x + (m @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"])
    x = layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], eps)
    return x @ w["transformer.wte.weight"].t()


def lm_loss(logits, labels):
    """The shifted cross-entropy, as GPT2LMHeadModel(labels=...) computes it."""
    v = logits.shape[-1]
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, v), labels[:, 1:].reshape(-1))


def enc(t):
    t = t.detach().double()
    return {"shape": list(t.shape), "data": [float("%.10g" % x) for x in t.reshape(-1).tolist()]}


def main():
    weights = make_weights(CFG, seed=20240611)
    tensors = dict(weights)
    tensors["lm_head.weight"] = weights["transformer.wte.weight"].clone()
    p = CFG["n_positions"]
    for i in range(CFG["n_layer"]):
        tensors["transformer.h.%d.attn.bias" % i] = torch.tril(torch.ones(p, p, dtype=torch.bool)).view(1, 1, p, p)
        tensors["transformer.h.%d.attn.masked_bias" % i] = torch.tensor(-1e4)
    write_safetensors(os.path.join(HERE, "gpt2_tiny.safetensors"), tensors, {"format": "pt"})

    w64 = {k: v.double().requires_grad_() for k, v in weights.items()}
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(0, CFG["vocab_size"], (2, 10), generator=g)
    logits = gpt2_logits(w64, CFG, ids)
    loss = lm_loss(logits, ids)
    names = ["transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", "transformer.ln_f.weight"]
    grads = torch.autograd.grad(loss, [w64[n] for n in names])

    prompt = [11, 42, 7]
    seq, gap = list(prompt), float("inf")
    with torch.no_grad():
        for _ in range(8):
            last = gpt2_logits(w64, CFG, torch.tensor([seq]))[0, -1]
            top = torch.topk(last, 2).values
            gap = min(gap, float(top[0] - top[1]))
            seq.append(int(last.argmax()))
    if gap < 1e-3:
        raise SystemExit("the greedy choices are too close (%g): pick another seed" % gap)

    out = {
        "config": CFG,
        "ids": ids.tolist(),
        "logits": enc(logits),
        "loss": float(loss),
        "grads": {n: enc(gr) for n, gr in zip(names, grads)},
        "prompt": prompt,
        "greedy": seq[len(prompt):],
        "greedy_gap": gap,
        # the logits of ids under config.json's attention flags
        "attn_variants": {
            name: {"config": flags, "logits": enc(gpt2_logits(w64, CFG, ids, **flags))}
            for name, flags in [
                ("scale_attn_weights false", {"scale_attn_weights": False}),
                ("scale_attn_by_inverse_layer_idx", {"scale_attn_by_inverse_layer_idx": True}),
                ("both", {"scale_attn_weights": False, "scale_attn_by_inverse_layer_idx": True}),
            ]
        },
    }
    with open(os.path.join(HERE, "goldens.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("loss %.6f, greedy %s (smallest gap %.4f)" % (float(loss), out["greedy"], gap))


if __name__ == "__main__":
    main()
