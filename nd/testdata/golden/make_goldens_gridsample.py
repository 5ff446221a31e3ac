#!/usr/bin/python3
"""Goldens for gridsample_test.go: torch.nn.functional.grid_sample
(Debian's python3-torch) in float64, bilinear and nearest, zeros, border
and reflection padding, with and without align_corners, on grids that
reach outside [-1, 1], with the gradients of sum(y * g) with respect to
the input and the grid for a fixed g; grid positions exactly on the
bounds, and affine_grid's identity (and other) thetas with the gradient
with respect to theta.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_gridsample.py
It writes nd/testdata/golden/goldens_gridsample.json.
"""
import json
from fractions import Fraction

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

# Positions exactly on the bounds: the edge pixels' centres (-1 and 1 with
# align_corners, ±(1 - 1/n) without), the outer edges (±1 without
# align_corners), points that reflect onto an edge (±3 and ±(1 + 1/n)),
# and a few inside, on a [1, 2, 4, 8] image, where border and reflection
# padding give the grid no gradient (clip_coordinates_set_grad counts the
# bounds as outside). All are exact in binary.
xs = [-3, -1.125, -1, -0.875, -0.3, 0, 0.875, 1, 1.125, 3, 5]
ys = [-3, -1.25, -1, -0.75, 0.2, 0.75, 1, 1.25, 3]
bounds = []
for mode in ("bilinear", "nearest"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            x = torch.rand(1, 2, 4, 8, dtype=torch.float64, requires_grad=True)
            grid = torch.tensor([[[[gx, gy] for gx in xs] for gy in ys]], dtype=torch.float64, requires_grad=True)
            y = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
            g = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
            (y * g).sum().backward()
            bounds.append({
                "mode": mode, "padding": pad, "align_corners": ac,
                "x": x.detach().flatten().tolist(), "grid": grid.detach().flatten().tolist(),
                "y": y.detach().flatten().tolist(),
                "gx": x.grad.flatten().tolist(), "ggrid": grid.grad.flatten().tolist(),
            })

# The spatial transformer: affine_grid then grid_sample, the gradient of
# sum(y * g) with respect to theta. The identity puts the edge pixels on
# the bounds (with and without align_corners); the doubled map puts points
# outside, some on the reflection points; the last is shifted. Without
# align_corners torch's CPU kernel computes the pixel position
# (g + 1)·n/2 − 0.5 with one rounding (a fused multiply-add) and GridSample
# ((g + 1)·n − 1)/2 with two; where they differ by an ulp at a pixel centre
# the bilinear gradient is taken on the other side, so the sizes are ones
# where they agree for these thetas (checked below).
thetas = [[[1, 0, 0], [0, 1, 0]], [[2, 0, 0], [0, 2, 0]], [[1, 0, 0.5], [0, 1, -0.25]]]
affine = []
for mode in ("bilinear", "nearest"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            size = [1, 2, 3, 5] if ac else [1, 2, 4, 8]
            x = torch.rand(*size, dtype=torch.float64)
            for th in thetas:
                theta = torch.tensor([th], dtype=torch.float64, requires_grad=True)
                grid = F.affine_grid(theta, size, align_corners=ac)
                if not ac:
                    for axis, n in ((0, size[3]), (1, size[2])):
                        for v in grid[..., axis].flatten().tolist():
                            fused = float(Fraction(v + 1) * Fraction(n, 2) - Fraction(1, 2))
                            assert (v + 1) * (n / 2) - 0.5 == fused == ((v + 1) * n - 1) / 2, (v, n)
                y = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
                g = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
                (y * g).sum().backward()
                affine.append({
                    "mode": mode, "padding": pad, "align_corners": ac, "size": size,
                    "x": x.flatten().tolist(), "theta": theta.detach().flatten().tolist(),
                    "y": y.detach().flatten().tolist(), "gtheta": theta.grad.flatten().tolist(),
                })

with open("nd/testdata/golden/goldens_gridsample.json", "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases, "bounds": bounds, "affine": affine}, f)
print(len(cases), "cases,", len(bounds), "bound cases,", len(affine), "affine cases")
