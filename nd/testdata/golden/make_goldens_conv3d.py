#!/usr/bin/python3
"""Goldens for conv3d_test.go: torch's conv3d, conv_transpose3d, max_pool3d and avg_pool3d
(Debian's python3-torch) in float64, with the gradients of sum(y * g) for
a fixed g with respect to every input.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_conv3d.py
It writes nd/testdata/golden/goldens_conv3d.json.
"""
import json

import torch
import torch.nn.functional as F

torch.manual_seed(23)


def rand(*shape):
    return (torch.rand(shape, dtype=torch.float64) * 2 - 1).requires_grad_(True)


def head(y):
    return torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)


convs = []
for xs, ws, bias, stride, pad, dil, groups in [
    ([2, 3, 5, 6, 4], [4, 3, 3, 3, 2], True, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1),
    ([1, 4, 6, 5, 5], [6, 2, 2, 3, 3], False, [2, 1, 2], [1, 1, 0], [1, 1, 1], 2),
    ([1, 2, 7, 6, 6], [3, 2, 3, 2, 2], True, [1, 2, 1], [2, 0, 1], [2, 1, 2], 1),
]:
    x, w = rand(*xs), rand(*ws)
    b = rand(ws[0]) if bias else None
    y = F.conv3d(x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups)
    (y * head(y)).sum().backward()
    convs.append({
        "x_shape": xs, "x": x.detach().flatten().tolist(),
        "w_shape": ws, "w": w.detach().flatten().tolist(),
        "b": b.detach().flatten().tolist() if bias else None,
        "stride": stride, "pad": pad, "dilate": dil, "groups": groups,
        "y_shape": list(y.shape), "y": y.detach().flatten().tolist(),
        "gx": x.grad.flatten().tolist(), "gw": w.grad.flatten().tolist(),
        "gb": b.grad.flatten().tolist() if bias else None,
    })

transposed = []
for xs, ws, bias, stride, pad, opad, dil, groups in [
    ([2, 3, 3, 4, 3], [3, 2, 2, 3, 2], True, [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1),
    ([1, 4, 3, 3, 4], [4, 3, 3, 2, 3], False, [2, 1, 2], [1, 0, 1], [1, 0, 1], [1, 1, 1], 2),
    ([1, 2, 4, 3, 3], [2, 2, 2, 2, 2], True, [2, 2, 1], [1, 1, 0], [0, 1, 0], [2, 1, 2], 1),
]:
    x, w = rand(*xs), rand(*ws)
    b = rand(ws[1] * groups) if bias else None
    y = F.conv_transpose3d(x, w, b, stride=stride, padding=pad, output_padding=opad, groups=groups, dilation=dil)
    (y * head(y)).sum().backward()
    transposed.append({
        "x_shape": xs, "x": x.detach().flatten().tolist(),
        "w_shape": ws, "w": w.detach().flatten().tolist(),
        "b": b.detach().flatten().tolist() if bias else None,
        "stride": stride, "pad": pad, "output_pad": opad, "dilate": dil, "groups": groups,
        "y_shape": list(y.shape), "y": y.detach().flatten().tolist(),
        "gx": x.grad.flatten().tolist(), "gw": w.grad.flatten().tolist(),
        "gb": b.grad.flatten().tolist() if bias else None,
    })

pools = []
for kind, xs, k, s, p, ceil, incl in [
    ("max", [2, 2, 5, 6, 4], [2, 2, 2], [2, 2, 2], [0, 0, 0], False, True),
    ("max", [1, 2, 7, 5, 6], [3, 3, 2], [2, 2, 1], [1, 1, 1], True, True),
    ("avg", [2, 2, 5, 6, 4], [2, 2, 2], [2, 2, 2], [0, 0, 0], False, True),
    ("avg", [1, 2, 7, 5, 6], [3, 3, 2], [2, 2, 1], [1, 1, 1], True, True),
    ("avg", [1, 2, 7, 5, 6], [3, 3, 2], [2, 2, 1], [1, 1, 1], True, False),
    ("avg", [1, 3, 6, 6, 6], [3, 2, 3], [3, 1, 2], [1, 0, 1], False, False),
]:
    x = rand(*xs)
    if kind == "max":
        y = F.max_pool3d(x, k, s, p, ceil_mode=ceil)
    else:
        y = F.avg_pool3d(x, k, s, p, ceil_mode=ceil, count_include_pad=incl)
    (y * head(y)).sum().backward()
    pools.append({
        "kind": kind, "x_shape": xs, "x": x.detach().flatten().tolist(),
        "kernel": k, "stride": s, "pad": p, "ceil": ceil, "include_pad": incl,
        "y_shape": list(y.shape), "y": y.detach().flatten().tolist(),
        "gx": x.grad.flatten().tolist(),
    })
with open("nd/testdata/golden/goldens_conv3d.json", "w") as f:
    json.dump({"torch": torch.__version__, "convs": convs, "transposed": transposed, "pools": pools}, f)
print(len(convs), "convolutions,", len(transposed), "transposed,", len(pools), "poolings")
