#!/usr/bin/python3
"""Goldens for gridsample_test.go: torch.nn.functional.grid_sample
(Debian's python3-torch) in float64, bilinear and nearest, zeros, border
and reflection padding, with and without align_corners, on grids that
reach outside [-1, 1], with the gradients of sum(y * g) with respect to
the input and the grid for a fixed g.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_gridsample.py
It writes nd/testdata/golden/goldens_gridsample.json.
"""
import json

import torch
import torch.nn.functional as F

torch.manual_seed(29)
cases = []
for mode in ("bilinear", "nearest"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            x = torch.rand(2, 3, 4, 5, dtype=torch.float64, requires_grad=True)
            # Positions up to 1.6 outside, on no pixel centre or half.
            grid = ((torch.rand(2, 3, 6, 2, dtype=torch.float64) * 2 - 1) * 1.6).requires_grad_(True)
            y = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
            g = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
            (y * g).sum().backward()
            cases.append({
                "mode": mode, "padding": pad, "align_corners": ac,
                "x": x.detach().flatten().tolist(), "grid": grid.detach().flatten().tolist(),
                "y": y.detach().flatten().tolist(),
                "gx": x.grad.flatten().tolist(), "ggrid": grid.grad.flatten().tolist(),
            })
with open("nd/testdata/golden/goldens_gridsample.json", "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print(len(cases), "cases")
