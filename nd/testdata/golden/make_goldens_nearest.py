#!/usr/bin/python3
"""Goldens for interpolate_test.go's TestNearestIndexGoldens: the source
index of every output position of torch.nn.functional.interpolate in
nearest mode (Debian's python3-torch 1.13, CPU), along one axis, for input
sizes 1..24, scale factors and sizes, one and three channels, float32 and
float64. PyTorch computes them by two rules (one channel: a copy when the
size is kept, a halving when doubled, else a float32 product; several
channels: a float64 product rounded to float32), which this sweep pins.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_nearest.py
It writes nd/testdata/golden/goldens_nearest.json.
"""
import json

import torch
import torch.nn.functional as F

scales = [0.3, 0.55, 0.7, 1.1, 1.3, 1.7, 2.05, 2.1, 2.5, 3.7]
cases = []
for dt in (torch.float32, torch.float64):
    for c in (1, 3):
        for n in range(1, 25):
            x = torch.arange(n, dtype=dt).reshape(1, 1, n, 1).repeat(1, c, 1, 1)
            for s in scales:
                if int(n * s) < 1:
                    continue
                y = F.interpolate(x, scale_factor=(s, 1.0), mode="nearest")
                cases.append({"dtype": str(dt).replace("torch.", ""), "channels": c, "in": n, "scale": s,
                              "idx": [int(v) for v in y[0, 0, :, 0].tolist()]})
            for out in (2 * n, 3 * n + 1, max(1, n // 2)):
                y = F.interpolate(x, size=(out, 1), mode="nearest")
                cases.append({"dtype": str(dt).replace("torch.", ""), "channels": c, "in": n, "size": out,
                              "idx": [int(v) for v in y[0, 0, :, 0].tolist()]})
with open("nd/testdata/golden/goldens_nearest.json", "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print(len(cases), "cases")
