#!/usr/bin/python3
"""Writes layers_more_goldens.json for gluon/nn's 1-D pooling, padding,
pixel shuffle and activation layers (layers_more_test.go).

Run from the repository root with Debian's python3-torch:

    /usr/bin/python3 gluon/nn/testdata/make_goldens_layers_more.py

Each case runs a torch module in float64 on a seeded random input, then
backpropagates a seeded random head. The JSON holds the layer's settings,
the input, the head, the output and the input's gradient.
"""
import json
import os

import torch
import torch.nn as tnn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261129)


def rand(*shape, lo=-4.0, hi=4.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


def enc(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def case(name, layer, module, x, cfg=None):
    x = x.clone().requires_grad_(True)
    y = module(x)
    head = rand(*y.shape, lo=-1, hi=1)
    (y * head).sum().backward()
    return {"name": name, "layer": layer, "config": cfg or {}, "input": enc(x),
            "head": enc(head), "output": enc(y), "grad": enc(x.grad)}


def main():
    cases = []
    for act, mod in [("softsign", tnn.Softsign()), ("selu", tnn.SELU()),
                     ("hardsigmoid", tnn.Hardsigmoid()), ("hardswish", tnn.Hardswish()),
                     ("mish", tnn.Mish())]:
        # Inputs stay off the kinks of the hard activations at ±3.
        x = rand(4, 6)
        x = torch.where((x.abs() - 3).abs() < 0.05, x * 0.9, x)
        cases.append(case("act-" + act, "activation", mod, x, {"act": act}))
    for name, cfg in [
        ("max", {"type": "max", "size": 3, "stride": 2, "pad": 1, "ceil": False, "exclude": False}),
        ("max-ceil", {"type": "max", "size": 2, "stride": 2, "pad": 0, "ceil": True, "exclude": False}),
        ("avg-include", {"type": "avg", "size": 3, "stride": 2, "pad": 1, "ceil": False, "exclude": False}),
        ("avg-exclude-ceil", {"type": "avg", "size": 3, "stride": 2, "pad": 1, "ceil": True, "exclude": True}),
        ("avg-stride1", {"type": "avg", "size": 4, "stride": 1, "pad": 0, "ceil": False, "exclude": False}),
    ]:
        if cfg["type"] == "max":
            m = tnn.MaxPool1d(cfg["size"], cfg["stride"], cfg["pad"], ceil_mode=cfg["ceil"])
        else:
            m = tnn.AvgPool1d(cfg["size"], cfg["stride"], cfg["pad"], ceil_mode=cfg["ceil"],
                              count_include_pad=not cfg["exclude"])
        cases.append(case("pool1d-" + name, "pool1d", m, rand(2, 3, 10), cfg))
    # Ceil mode with windows larger than the padded input (PyTorch clips
    # them as long as one fits).
    for name, cfg, w in [
        ("max-ceil-big", {"type": "max", "size": 6, "stride": 6, "pad": 0, "ceil": True, "exclude": False}, 2),
        ("avg-ceil-big", {"type": "avg", "size": 3, "stride": 2, "pad": 0, "ceil": True, "exclude": False}, 2),
        ("avg-ceil-big-pad", {"type": "avg", "size": 5, "stride": 5, "pad": 1, "ceil": True, "exclude": False}, 2),
        ("avg-ceil-big-exclude", {"type": "avg", "size": 6, "stride": 4, "pad": 2, "ceil": True, "exclude": True}, 1),
    ]:
        if cfg["type"] == "max":
            m = tnn.MaxPool1d(cfg["size"], cfg["stride"], cfg["pad"], ceil_mode=True)
        else:
            m = tnn.AvgPool1d(cfg["size"], cfg["stride"], cfg["pad"], ceil_mode=True,
                              count_include_pad=not cfg["exclude"])
        cases.append(case("pool1d-" + name, "pool1d", m, rand(2, 3, w), cfg))
    cases.append(case("pool1d-global-max", "pool1d", tnn.AdaptiveMaxPool1d(1), rand(2, 3, 7),
                      {"type": "max", "global": True}))
    cases.append(case("pool1d-global-avg", "pool1d", tnn.AdaptiveAvgPool1d(1), rand(2, 3, 7),
                      {"type": "avg", "global": True}))
    w = [2, 1, 1, 3]  # left, right, top, bottom
    cases.append(case("pad-reflect", "pad2d", tnn.ReflectionPad2d(w), rand(2, 2, 4, 5),
                      {"mode": "reflect", "widths": w}))
    cases.append(case("pad-replicate", "pad2d", tnn.ReplicationPad2d(w), rand(2, 2, 4, 5),
                      {"mode": "edge", "widths": w}))
    cases.append(case("pad-constant", "pad2d", tnn.ConstantPad2d(w, 1.5), rand(2, 2, 4, 5),
                      {"mode": "constant", "widths": w, "value": 1.5}))
    cases.append(case("pixelshuffle-2", "pixelshuffle", tnn.PixelShuffle(2), rand(2, 8, 3, 4),
                      {"factor": 2}))
    cases.append(case("pixelshuffle-3", "pixelshuffle", tnn.PixelShuffle(3), rand(1, 9, 2, 2),
                      {"factor": 3}))
    # More activations; the inputs include their kinks (0, 6, ±1), where
    # PyTorch's gradients take one side.
    kinks = torch.tensor([0.0, 6.0, 1.0, -1.0, 7.5, -2.0])
    for act, mod in [("relu6", tnn.ReLU6()), ("hardtanh", tnn.Hardtanh()), ("logsigmoid", tnn.LogSigmoid()),
                     ("tanhshrink", tnn.Tanhshrink()), ("celu", tnn.CELU())]:
        x = torch.cat([rand(18), kinks]).reshape(4, 6)
        cases.append(case("act-" + act, "activation", mod, x, {"act": act}))
    path = os.path.join(HERE, "layers_more_goldens.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_goldens_layers_more.py, torch " + torch.__version__,
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases to", path)


if __name__ == "__main__":
    main()
