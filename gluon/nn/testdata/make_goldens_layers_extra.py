#!/usr/bin/python3
"""Writes layers_extra_goldens.json for gluon/nn's RMSNorm, GLU, softmax
layers, RReLU, Unflatten, ChannelShuffle, PairwiseDistance,
CosineSimilarity, EmbeddingBag and the alpha dropouts
(layers_extra_golden_test.go).

Run from the repository root with Debian's python3-torch (1.13):

    /usr/bin/python3 gluon/nn/testdata/make_goldens_layers_extra.py

Each case runs a torch module or function in float64 (one RMSNorm case
in float32) on seeded random inputs, then backpropagates a seeded random
head. torch 1.13 has no nn.RMSNorm: its cases are torch 2.4's formula,
x * rsqrt(mean(x**2 over the trailing axes) + eps) * weight, with eps
None meaning torch.finfo(dtype).eps, computed with autograd.

JSON: {"cases": [{"name", "layer", "config", "inputs": [T], "params":
{name: T}, "head": T, "output": T, "grads": [T or null], "param_grads":
{name: T}}]}, T = {"shape", "data", "int"}; grads[i] is the gradient of
sum(head * output) with respect to inputs[i] (null for integer inputs).

The alpha dropout cases hold no gradient: they run torch's alpha dropout
in training mode twice with one seed, on zeros and on ones, so that the
kept elements give the scale (y1 - y0) and shift (y0) and the dropped ones
their value; the Go test checks its own output against those constants.
"""
import json
import math
import os

import torch
import torch.nn as tnn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261201)


def rand(*shape, lo=-2.0, hi=2.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


def enc(t):
    if t is None:
        return None
    t = t.detach().contiguous()
    is_int = not t.dtype.is_floating_point
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)], "int": is_int}


def case(name, layer, fn, inputs, cfg=None, params=None):
    """fn(inputs, params) -> output; floating inputs and params get grads."""
    xs = [x.clone().requires_grad_(x.dtype.is_floating_point) for x in inputs]
    ps = {k: v.clone().requires_grad_(True) for k, v in (params or {}).items()}
    y = fn(xs, ps)
    head = rand(*y.shape, lo=-1, hi=1).to(y.dtype)
    (y * head).sum().backward()
    return {"name": name, "layer": layer, "config": cfg or {},
            "inputs": [enc(x) for x in xs], "params": {k: enc(v) for k, v in ps.items()},
            "head": enc(head), "output": enc(y),
            "grads": [enc(x.grad) if x.dtype.is_floating_point else None for x in xs],
            "param_grads": {k: enc(v.grad) for k, v in ps.items()}}


def module_case(name, layer, module, x, cfg=None):
    return case(name, layer, lambda xs, ps: module(xs[0]), [x], cfg)


def rms_norm(x, shape, weight, eps):
    dims = tuple(range(x.dim() - len(shape), x.dim()))
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return y * weight if weight is not None else y


def rms_case(name, x, shape, affine=True, eps=None):
    cfg = {"shape": shape, "affine": affine, "eps": eps or 0.0}
    params = {"gamma": rand(*shape, lo=0.5, hi=1.5).to(x.dtype)} if affine else {}
    if x.dtype == torch.float32:
        cfg["float32"] = True
    return case(name, "rmsnorm", lambda xs, ps: rms_norm(xs[0], shape, ps.get("gamma"), eps), [x], cfg, params)


def alpha_case(name, p, feature, shape):
    """torch's kept scale and shift and dropped value for rate p."""
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    torch.manual_seed(7)
    y0 = fn(torch.zeros(shape), p, True)
    torch.manual_seed(7)
    y1 = fn(torch.ones(shape), p, True)
    kept = y1 != y0
    assert kept.any() and (~kept).any()
    a = (y1 - y0)[kept]
    b = y0[kept]
    d = y0[~kept]
    assert (a - a[0]).abs().max() < 1e-15 and (b - b[0]).abs().max() < 1e-15 and (d - d[0]).abs().max() < 1e-15
    return {"name": name, "layer": "alphadropout", "config": {"rate": p, "feature": feature},
            "constants": {"scale": float(a[0]), "shift": float(b[0]), "dropped": float(d[0])}}


def main():
    cases = []
    # RMSNorm: one and two normalised axes, no scale, an explicit eps,
    # and a float32 case whose tiny inputs make the default eps matter.
    cases.append(rms_case("rmsnorm-last", rand(3, 5), [5]))
    cases.append(rms_case("rmsnorm-two-axes", rand(2, 3, 2, 4), [2, 4]))
    cases.append(rms_case("rmsnorm-no-scale-eps", rand(4, 6), [6], affine=False, eps=0.1))
    cases.append(rms_case("rmsnorm-f32-tiny", (rand(2, 4) * 1e-4).to(torch.float32), [4]))
    # GLU, the softmax family.
    cases.append(module_case("glu-last", "glu", tnn.GLU(), rand(3, 6), {"axis": -1}))
    cases.append(module_case("glu-axis1", "glu", tnn.GLU(dim=1), rand(2, 4, 3), {"axis": 1}))
    cases.append(module_case("softmax-axis1", "softmax", tnn.Softmax(dim=1), rand(2, 4, 3), {"axis": 1}))
    cases.append(module_case("logsoftmax-last", "logsoftmax", tnn.LogSoftmax(dim=-1), rand(3, 5, lo=-20, hi=20),
                             {"axis": -1}))
    cases.append(module_case("softmin-axis0", "softmin", tnn.Softmin(dim=0), rand(4, 3), {"axis": 0}))
    cases.append(module_case("softmax2d-4d", "softmax2d", tnn.Softmax2d(), rand(2, 3, 2, 2)))
    cases.append(module_case("softmax2d-3d", "softmax2d", tnn.Softmax2d(), rand(3, 2, 4)))
    # RReLU in eval mode (the mean slope); the input holds 0.
    x = torch.cat([rand(11), torch.zeros(1)]).reshape(3, 4)
    cases.append(case("rrelu-eval", "rrelu", lambda xs, ps: F.rrelu(xs[0], 0.1, 0.3, training=False), [x],
                      {"lower": 0.1, "upper": 0.3}))
    # Unflatten and ChannelShuffle.
    cases.append(module_case("unflatten", "unflatten", tnn.Unflatten(1, (2, 3)), rand(2, 6, 2),
                             {"axis": 1, "sizes": [2, 3]}))
    cases.append(module_case("unflatten-free-last", "unflatten", tnn.Unflatten(-1, (2, -1)), rand(3, 8),
                             {"axis": -1, "sizes": [2, -1]}))
    # torch 1.13's channel_shuffle has no backward: the gradient is the
    # definition's (a view, a transpose, a reshape), checked against the
    # module's output.
    for name, g, x in [("channelshuffle-3", 3, rand(2, 6, 2, 2)), ("channelshuffle-1d", 2, rand(1, 4, 3))]:
        def shuffle(xs, ps, g=g):
            v = xs[0]
            n, c = v.shape[:2]
            return v.reshape(n, g, c // g, -1).transpose(1, 2).reshape(v.shape)
        cs = case(name, "channelshuffle", shuffle, [x], {"groups": g})
        assert torch.equal(tnn.ChannelShuffle(g)(x), shuffle([x], {}))
        cases.append(cs)
    # PairwiseDistance: p 2, 1, +Inf (ties: a split gradient), 3, 0.5,
    # keepdim, broadcasting, and a zero difference (gradient 0).
    for name, p, eps, keep, a, b in [
        ("pdist-p2", 2.0, 1e-6, False, rand(4, 5), rand(4, 5)),
        ("pdist-p1-keepdim", 1.0, 1e-6, True, rand(3, 4), rand(3, 4)),
        ("pdist-pinf-ties", math.inf, 0.0, False, torch.tensor([[1.0, 3.0, -3.0], [0.5, -0.2, 0.1]]),
         torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])),
        ("pdist-p3-broadcast", 3.0, 1e-6, False, rand(3, 4), rand(4)),
        ("pdist-p0.5", 0.5, 0.0, False, torch.tensor([[1.0, 0.0, -2.0], [0.3, 0.7, 0.0]]), rand(2, 3) * 0),
        ("pdist-zero", 2.0, 0.0, False, torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1.0, 2.0], [0.0, 4.0]])),
    ]:
        cases.append(case(name, "pairwise", lambda xs, ps, p=p, eps=eps, keep=keep:
                          F.pairwise_distance(xs[0], xs[1], p=p, eps=eps, keepdim=keep), [a, b],
                          {"p": "inf" if math.isinf(p) else p, "eps": eps, "keepdim": keep}))
    # CosineSimilarity: axis 1 and −1, broadcasting, a zero vector (eps).
    for name, axis, eps, a, b in [
        ("cosine-axis1", 1, 1e-8, rand(3, 4, 2), rand(3, 4, 2)),
        ("cosine-last-broadcast", -1, 1e-8, rand(3, 5), rand(1, 5)),
        ("cosine-zero-eps", 1, 0.5, torch.tensor([[0.0, 0.0, 0.0], [0.1, 0.2, -0.1]]), rand(2, 3)),
    ]:
        cases.append(case(name, "cosine", lambda xs, ps, axis=axis, eps=eps:
                          F.cosine_similarity(xs[0], xs[1], dim=axis, eps=eps), [a, b], {"axis": axis, "eps": eps}))
    # EmbeddingBag: modes on 2-D bags, offsets (empty bags, the CSR form),
    # per-sample weights, padding, and max ties (a repeated index; two
    # equal rows).
    weight = rand(6, 3)
    weight[4] = weight[2]  # rows 2 and 4 equal: ties between rows
    ids2 = torch.tensor([[0, 2, 1], [3, 3, 5], [4, 2, 2]])
    ids1 = torch.tensor([1, 2, 4, 0, 5, 5, 3, 2])
    offs = torch.tensor([0, 3, 3, 5])  # bags [1 2 4] [] [0 5] [5 3 2]
    for name, mode, ids, off, psw, pad, last in [
        ("bag-sum-2d", "sum", ids2, None, None, None, False),
        ("bag-mean-2d", "mean", ids2, None, None, None, False),
        ("bag-max-2d-ties", "max", ids2, None, None, None, False),
        ("bag-sum-offsets-psw", "sum", ids1, offs, rand(8), None, False),
        ("bag-mean-offsets", "mean", ids1, offs, None, None, False),
        ("bag-max-offsets", "max", ids1, offs, None, None, False),
        ("bag-mean-offsets-last", "mean", ids1, torch.tensor([0, 3, 3, 5, 8]), None, None, True),
        ("bag-sum-pad-psw", "sum", torch.tensor([[0, 2, 1], [2, 2, 2], [5, 2, 3]]), None, rand(3, 3), 2, False),
        ("bag-mean-pad", "mean", torch.tensor([[0, 2, 1], [2, 2, 2], [5, 2, 3]]), None, None, 2, False),
        ("bag-max-pad-offsets", "max", ids1, offs, None, 2, False),
    ]:
        w = weight.clone()
        if pad is not None:
            w[pad] = rand(3)  # a padding row that is not zero
        inputs = [ids] + ([off] if off is not None else []) + ([psw] if psw is not None else [])

        def fn(xs, ps, mode=mode, off=off, psw=psw, pad=pad, last=last):
            o = xs[1] if off is not None else None
            s = xs[-1] if psw is not None else None
            return F.embedding_bag(xs[0], ps["weight"], o, mode=mode, per_sample_weights=s, padding_idx=pad,
                                   include_last_offset=last)
        cases.append(case(name, "embeddingbag", fn, inputs,
                          {"mode": mode, "offsets": off is not None, "psw": psw is not None,
                           "padding": -1 if pad is None else pad, "last": last}, {"weight": w}))
    # Alpha dropout's constants.
    for p in [0.2, 0.5]:
        cases.append(alpha_case("alpha-%g" % p, p, False, (64, 64)))
    cases.append(alpha_case("feature-alpha-0.3", 0.3, True, (16, 32, 2, 2)))
    path = os.path.join(HERE, "layers_extra_goldens.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_goldens_layers_extra.py, torch " + torch.__version__,
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases to", path)


if __name__ == "__main__":
    main()
