#!/usr/bin/python3
"""Goldens for gluon/model/text's batched, left-padded GPT-2 tests.

GPT-2 is written out in plain torch (Debian's python3-torch; the
transformers package is not needed) with an attention mask, computing
what Hugging Face's GPT2LMHeadModel computes in eval mode when
generate() runs a left-padded batch:

  - position_ids = attention_mask.cumsum(-1) - 1, set to 1 where the
    mask is 0 (GPT2LMHeadModel.prepare_inputs_for_generation);
  - the scores of each block, after the causal mask (torch.where with
    finfo.min, as GPT2Attention._attn), get the extended attention mask
    (1 - mask[:, None, None, :]) * finfo.min added (GPT2Model.forward);
  - the rest as make_goldens.py's gpt2_logits.

The weights are those of the committed fixture gpt2_tiny.safetensors
(made by make_goldens.py), read back here; the goldens are computed in
float64 from those float32 values, and written with all their digits
(so that a float64 model is checked tightly):

  - a batch of four prompts of 5, 2, 7 and 4 tokens padded on the left
    to 7 (the padding holds arbitrary token ids, which the mask must
    hide), its mask and the logits of every position: the tests compare
    the positions whose mask is 1 (at the padding the logits carry no
    meaning, and transformers' versions differ there);
  - the greedy continuation of each row by 6 tokens, the batch run as
    generate() runs it (the mask extended by ones, the whole sequence
    recomputed each step, no cache), and the smallest gap between the
    best and second best logit on the way, so that float32 cannot flip
    a choice.

Run from the repository root:
    /usr/bin/python3 gluon/model/text/testdata/make_gpt2_batch_goldens.py
It writes gluon/model/text/testdata/gpt2_batch_goldens.json.
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools"))
sys.path.insert(0, HERE)
from torch2safetensors import read_safetensors  # noqa: E402
from make_goldens import CFG, gelu_new, layer_norm  # noqa: E402


def enc(t):
    """A tensor as the tests read it, every float64 digit kept (repr)."""
    t = t.detach().double()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def gpt2_logits_masked(w, cfg, ids, mask):
    """Logits [B, T, V] of left- or right-padded ids [B, T] with mask [B, T] (eval mode)."""
    eps, nh = cfg["layer_norm_epsilon"], cfg["n_head"]
    b, t = ids.shape
    pos = mask.long().cumsum(-1) - 1
    pos = pos.masked_fill(mask == 0, 1)
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][pos]
    e = x.shape[-1]
    d = e // nh
    lowest = torch.finfo(x.dtype).min
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
    ext = (1.0 - mask[:, None, None, :].to(x.dtype)) * lowest
    for i in range(cfg["n_layer"]):
        h = "transformer.h.%d." % i
        a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps)
        qkv = a @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
        q, k, v = qkv.split(e, dim=-1)
        q, k, v = [z.reshape(b, t, nh, d).transpose(1, 2) for z in (q, k, v)]
        s = q @ k.transpose(-1, -2) / math.sqrt(d)
        s = torch.where(causal, s, torch.tensor(lowest, dtype=s.dtype))
        s = s + ext
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, t, e)
        x = x + (o @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"])
        m = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps)
        m = gelu_new(m @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"])
        x = x + (m @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"])
    x = layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], eps)
    return x @ w["transformer.wte.weight"].t()


def main():
    tensors = read_safetensors(os.path.join(HERE, "gpt2_tiny.safetensors"))
    w64 = {k: v.double() for k, v in tensors.items() if k.startswith("transformer.") and ".attn.bias" not in k
           and ".attn.masked_bias" not in k}
    prompts = [[11, 42, 7, 15, 18], [63, 5], [3, 90, 28, 71, 44, 9, 30], [11, 42, 7, 80]]
    t = max(len(p) for p in prompts)
    g = torch.Generator().manual_seed(11)
    ids = torch.randint(0, CFG["vocab_size"], (len(prompts), t), generator=g)  # the padding's ids: arbitrary
    mask = torch.zeros(len(prompts), t, dtype=torch.int64)
    for i, p in enumerate(prompts):
        ids[i, t - len(p):] = torch.tensor(p)
        mask[i, t - len(p):] = 1
    with torch.no_grad():
        logits = gpt2_logits_masked(w64, CFG, ids, mask)

        new, gap = 6, float("inf")
        seq, m = ids.clone(), mask.clone()
        for _ in range(new):
            last = gpt2_logits_masked(w64, CFG, seq, m)[:, -1]
            top = torch.topk(last, 2, dim=-1).values
            gap = min(gap, float((top[:, 0] - top[:, 1]).min()))
            seq = torch.cat([seq, last.argmax(-1, keepdim=True)], 1)
            m = torch.cat([m, torch.ones(len(prompts), 1, dtype=torch.int64)], 1)
    if gap < 1e-3:
        raise SystemExit("the greedy choices are too close (%g): pick other prompts" % gap)

    out = {
        "config": CFG,
        "prompts": prompts,
        "ids": ids.tolist(),
        "mask": mask.tolist(),
        "logits": enc(logits),
        "greedy": seq[:, t:].tolist(),
        "greedy_gap": gap,
    }
    with open(os.path.join(HERE, "gpt2_batch_goldens.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("greedy %s (smallest gap %.4f)" % (out["greedy"], gap))


if __name__ == "__main__":
    main()
