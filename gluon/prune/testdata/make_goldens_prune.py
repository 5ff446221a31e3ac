#!/usr/bin/python3
"""Writes prune_goldens.json and prune_state_dict.pt for gluon/prune
(golden_test.go, statedict_test.go), from torch.nn.utils.prune.

Run from the repository root with Debian's python3-torch (1.13):

    /usr/bin/python3 gluon/prune/testdata/make_goldens_prune.py

Everything in the JSON file is float64, from a seeded generator, so that
no two entries (nor two channel norms) tie.

"cases": a parameter of a given shape and values pruned in one or more
rounds (l1_unstructured, ln_structured with n = 1, 2, 3, inf, -inf on
dims 0, 1, 3 and -1, custom_from_mask, identity; importance scores in
some), with the mask after each round. Two or three rounds exercise
PruningContainer: fractions of the entries (or channels) still unpruned,
structured norms computed on the pruned weight (one case is built so that
the weight before pruning would choose another channel).

"global": global_unstructured with L1Unstructured over a Linear's and a
Conv2d's weights, from scratch and after a first l1_unstructured round:
the masks of both.

"grad": a small network (conv0: Conv2d(2, 3, 3, padding=1), tanh,
flatten, dense0: Linear(48, 5)) with conv0.weight pruned twice
(ln_structured, then l1_unstructured), dense0.weight and dense0.bias once;
the loss sum((net(x) - target)^2) and its gradients with respect to
weight_orig, bias_orig and conv0.bias.

prune_state_dict.pt is torch.save of that network's state_dict in float32
(conv0.weight_orig, conv0.weight_mask, dense0.bias_orig, ...); "state_dict"
in the JSON file holds its keys, an input and the network's output.

With "check PATH", the script instead loads the state dict Goluon wrote at
PATH into the same network, pruned with prune.identity as torch's own
recipe for loading a pruned state dict does, and prints as JSON the
network's float32 output on the "state_dict" input and the number of
zeros in each mask (statedict_test.go runs it when python3-torch is
installed).
"""
import json
import os
import sys
from collections import OrderedDict

import torch
import torch.nn as tnn
import torch.nn.utils.prune as prune

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261203)


def rand(*shape, lo=-1.0, hi=1.0):
    return lo + (hi - lo) * torch.rand(tuple(shape), generator=gen)


def enc(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def dec(a):
    return torch.tensor(a["data"]).reshape(a["shape"])


class Holder(tnn.Module):
    """A module holding one parameter, "weight", of any shape."""

    def __init__(self, weight):
        super().__init__()
        self.weight = tnn.Parameter(weight.clone())


def amount_of(spec):
    return spec["count"] if "count" in spec else spec["fraction"]


def norm_of(s):
    return float(s)  # "inf", "-inf", "2"


def apply_round(module, name, r):
    scores = dec(r["scores"]) if "scores" in r else None
    m = r["method"]
    if m == "l1":
        prune.l1_unstructured(module, name, amount=amount_of(r["amount"]), importance_scores=scores)
    elif m == "ln":
        prune.ln_structured(module, name, amount=amount_of(r["amount"]), n=norm_of(r["n"]),
                            dim=r["dim"], importance_scores=scores)
    elif m == "custom":
        prune.custom_from_mask(module, name, mask=dec(r["custom"]))
    elif m == "identity":
        prune.identity(module, name)
    else:
        raise ValueError(m)


def frac(x):
    return {"fraction": x}


def count(n):
    return {"count": n}


def l1(amount, scores=None):
    r = {"method": "l1", "amount": amount}
    if scores is not None:
        r["scores"] = scores
    return r


def ln(amount, n, dim, scores=None):
    r = {"method": "ln", "amount": amount, "n": n, "dim": dim}
    if scores is not None:
        r["scores"] = scores
    return r


def case(name, shape, *rounds):
    """shape may be the weight itself."""
    w = shape if isinstance(shape, torch.Tensor) else rand(*shape)
    shape = tuple(w.shape)
    m = Holder(w)
    out = []
    for r in rounds:
        r = dict(r)
        if r.get("scores") == "random":
            r["scores"] = enc(rand(*shape, lo=0.0, hi=1.0))
        if r.get("custom") == "random":
            r["custom"] = enc((rand(*shape, lo=0.0, hi=1.0) > 0.3).to(torch.float64))
        apply_round(m, "weight", r)
        r["want"] = enc(m.weight_mask)
        out.append(r)
    assert torch.equal(m.weight, w * m.weight_mask)
    return {"name": name, "weight": enc(w), "rounds": out}


def cases():
    d, c, b = (6, 5), (4, 3, 3, 3), (5,)
    return [
        case("l1-dense-fraction", d, l1(frac(0.3))),
        case("l1-dense-count", d, l1(count(7))),
        case("l1-conv-fraction", c, l1(frac(0.45))),
        case("l1-bias-half-even", b, l1(frac(0.5))),  # round(2.5) = 2
        case("l1-dense-none", d, l1(frac(0.0))),
        case("l1-dense-all", d, l1(frac(1.0))),
        case("l1-dense-count-all", d, l1(count(30))),
        case("l1-dense-scores", d, l1(frac(0.4), "random")),
        case("ln1-conv-dim0", c, ln(frac(0.5), "1", 0)),
        case("ln2-conv-dim0", c, ln(frac(0.5), "2", 0)),
        case("lninf-conv-dim0", c, ln(count(1), "inf", 0)),
        case("ln1-conv-dim1", c, ln(frac(0.34), "1", 1)),
        case("ln2-conv-dim1", c, ln(count(2), "2", 1)),
        case("lninf-conv-dim1", c, ln(frac(0.34), "inf", 1)),
        case("ln1-dense-dim0", d, ln(count(2), "1", 0)),
        case("ln2-dense-dim1", d, ln(frac(0.4), "2", 1)),
        case("lninf-dense-dim0", d, ln(frac(0.5), "inf", 0)),
        case("ln2-dense-dim-1", d, ln(count(3), "2", -1)),
        case("ln-neginf-dense-dim0", d, ln(count(2), "-inf", 0)),
        case("ln3-conv-dim3", c, ln(count(1), "3", 3)),
        case("ln2-dense-scores", d, ln(count(2), "2", 0, "random")),
        case("ln2-conv-none", c, ln(frac(0.1), "2", 0)),  # round(0.4) = 0
        case("custom-dense", d, {"method": "custom", "custom": "random"}),
        case("identity-then-l1", d, {"method": "identity"}, l1(frac(0.2))),
        case("l1-then-l1", d, l1(frac(0.3)), l1(frac(0.3))),
        case("l1-then-l1-count", c, l1(count(40)), l1(count(30))),
        case("l1-then-ln2-dim0", c, l1(frac(0.3)), ln(frac(0.5), "2", 0)),
        case("l1-then-ln1-dim1", d, l1(frac(0.5)), ln(count(2), "1", 1)),
        case("ln1-dim1-then-l1", c, ln(count(1), "1", 1), l1(frac(0.25))),
        case("lninf-then-ln2-dim0", c, ln(count(1), "inf", 0), ln(frac(0.34), "2", 0)),
        case("ln-dim0-then-ln-dim1", d, ln(count(2), "2", 0), ln(count(2), "2", 1)),
        case("custom-then-l1", d, {"method": "custom", "custom": "random"}, l1(frac(0.5))),
        case("l1-then-l1-scores", d, l1(frac(0.2)), l1(frac(0.25), "random")),
        case("ln2-then-l1-then-ln1", c, ln(count(1), "2", 0), l1(frac(0.3)), ln(count(1), "1", 1)),
        # A structured round ranks channels by the pruned weight, orig · mask:
        # row 0's L1 norm is 2.18 before the first round and 0.8 after it,
        # row 1's 2.06 throughout, so row 0 goes (row 1 would by orig).
        case("l1-then-ln1-ranks-pruned", torch.tensor([[0.45, -0.46, 0.47, 0.8],
                                                       [0.5, 0.51, -0.52, 0.53],
                                                       [1.1, 1.2, 1.3, -1.4]]),
             l1(count(3)), ln(count(1), "1", 0)),
    ]


def global_case(name, amount, first=None):
    dense, conv = tnn.Linear(5, 6), tnn.Conv2d(3, 4, 3)
    with torch.no_grad():
        for p in (dense.weight, dense.bias, conv.weight, conv.bias):
            p.copy_(rand(*p.shape))
    w = [enc(dense.weight), enc(conv.weight)]
    rounds = []
    if first is not None:
        prune.l1_unstructured(dense, "weight", amount=amount_of(first))
        rounds.append(enc(dense.weight_mask))
    prune.global_unstructured([(dense, "weight"), (conv, "weight")],
                              pruning_method=prune.L1Unstructured, amount=amount_of(amount))
    return {"name": name, "amount": amount, "first": first, "weights": w,
            "first_mask": rounds[0] if rounds else None,
            "masks": [enc(dense.weight_mask), enc(conv.weight_mask)]}


def make_net():
    return tnn.Sequential(OrderedDict([
        ("conv0", tnn.Conv2d(2, 3, 3, padding=1)),
        ("act", tnn.Tanh()),
        ("flatten", tnn.Flatten()),
        ("dense0", tnn.Linear(48, 5)),
    ]))


def prune_net(net):
    prune.ln_structured(net.conv0, "weight", amount=1, n=2, dim=0)
    prune.l1_unstructured(net.conv0, "weight", amount=0.2)
    prune.l1_unstructured(net.dense0, "weight", amount=0.5)
    prune.l1_unstructured(net.dense0, "bias", amount=2)


def grad_case():
    net = make_net()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(rand(*p.shape))
    init = {k: enc(v) for k, v in net.state_dict().items()}
    prune_net(net)
    x, target = rand(2, 2, 4, 4), rand(2, 5)
    y = net(x)
    loss = ((y - target) ** 2).sum()
    loss.backward()
    params = dict(net.named_parameters())
    buffers = dict(net.named_buffers())
    return net, {
        "init": init, "input": enc(x), "target": enc(target), "output": enc(y),
        "loss": float(loss),
        "masks": {k: enc(v) for k, v in buffers.items()},
        "grads": {k: enc(p.grad) for k, p in params.items()},
    }


def state_dict_case(net):
    net = net.float()
    x = rand(2, 2, 4, 4).float()
    with torch.no_grad():
        y = net(x)
    sd = net.state_dict()
    torch.save(sd, os.path.join(HERE, "prune_state_dict.pt"))
    return {"keys": list(sd.keys()), "input": enc(x), "output": enc(y)}


def check(path):
    with open(os.path.join(HERE, "prune_goldens.json")) as f:
        g = json.load(f)
    net = make_net().float()
    for mod, name in ((net.conv0, "weight"), (net.dense0, "weight"), (net.dense0, "bias")):
        prune.identity(mod, name)
    net.load_state_dict(torch.load(path))
    x = dec(g["state_dict"]["input"]).float()
    with torch.no_grad():
        y = net(x)
    zeros = {k: int((v == 0).sum()) for k, v in net.named_buffers()}
    json.dump({"output": [float(v) for v in y.reshape(-1)], "mask_zeros": zeros}, sys.stdout)


def main():
    net, grad = grad_case()
    out = {
        "torch": torch.__version__,
        "cases": cases(),
        "global": [global_case("global-fraction", frac(0.3)),
                   global_case("global-count", count(50)),
                   global_case("global-after-l1", frac(0.25), first=frac(0.2))],
        "grad": grad,
        "state_dict": state_dict_case(net),
    }
    with open(os.path.join(HERE, "prune_goldens.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        main()
