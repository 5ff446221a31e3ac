#!/usr/bin/python3
"""Goldens for interpolate_test.go: torch.nn.functional.interpolate
(Debian's python3-torch) in float32 and float64, nearest and bilinear
(with and without align_corners, with and without antialias), by size and
by scale_factor (one leaving an axis its size, which PyTorch then copies),
shrinking and enlarging, and a 640-pixel-wide image (where
float32 coordinates lose precision) shrunk, with the gradient of
sum(y * g) with respect to x for a fixed g.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_interpolate.py
It writes nd/testdata/golden/goldens_interpolate.json.
"""
import json

import torch
import torch.nn.functional as F

torch.manual_seed(11)
inputs, cases = [], []
shapes = [(1, 2, 7, 9), (1, 1, 5, 4), (1, 1, 2, 640)]
outs = [(3, 4), (11, 14), (7, 2), (1, 1), (2, 223)]
scales = [(2.0, 2.0), (0.5, 1.5), (1.7, 0.6), (1.0, 0.35), (1.1, 1.7)]
modes = [("nearest", False, False), ("bilinear", False, False), ("bilinear", True, False), ("bilinear", False, True)]
for dt in (torch.float32, torch.float64):
    for shape in shapes:
        x = torch.rand(shape, dtype=dt) * 4 - 2
        inputs.append({"dtype": str(dt).replace("torch.", ""), "shape": list(shape), "x": x.flatten().tolist()})
        inp = len(inputs) - 1
        for mode, ac, aa in modes:
            for size, scale in [(o, None) for o in outs] + [(None, s) for s in scales]:
                wide = shape[-1] == 640
                if wide != (size == (2, 223) or scale == (1.0, 0.35)) or (wide and dt != torch.float32):
                    continue  # the wide image only shrinks, in float32, to keep the file small
                kw = {"mode": mode}
                if mode == "bilinear":
                    kw["align_corners"] = ac
                    kw["antialias"] = aa
                if size is not None:
                    kw["size"] = size
                else:
                    kw["scale_factor"] = scale
                xr = x.clone().requires_grad_(True)
                y = F.interpolate(xr, **kw)
                g = torch.linspace(-1, 1, y.numel(), dtype=dt).reshape(y.shape)
                (y * g).sum().backward()
                cases.append({
                    "input": inp, "mode": mode, "align_corners": ac, "antialias": aa,
                    "size": list(size) if size else None,
                    "scale": list(scale) if scale else None,
                    "y_shape": list(y.shape), "y": y.detach().flatten().tolist(),
                    "grad": None if wide else xr.grad.flatten().tolist(),
                })
with open("nd/testdata/golden/goldens_interpolate.json", "w") as f:
    json.dump({"torch": torch.__version__, "inputs": inputs, "cases": cases}, f)
print(len(cases), "cases")
