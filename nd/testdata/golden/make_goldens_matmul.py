#!/usr/bin/python3
"""Goldens for matmul_broadcast_test.go: torch.matmul (Debian's
python3-torch) in float64 on 1-D operands and broadcast batches, with the
gradients of sum(y * g) with respect to both operands for a fixed g.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_matmul.py
It writes nd/testdata/golden/goldens_matmul.json.
"""
import json

import torch

torch.manual_seed(13)
shapes = [
    ([3], [3]), ([2, 3], [3]), ([3], [3, 4]), ([3], [2, 3, 4]), ([2, 2, 3], [3]),
    ([1, 2, 3], [4, 3, 2]), ([2, 1, 2, 3], [3, 3, 2]), ([2, 3], [2, 2, 3, 4]),
    ([4, 2, 3], [1, 3, 5]), ([2, 2, 3], [2, 3, 4]), ([5, 2, 3], [3, 4]),
]
cases = []
for sa, sb in shapes:
    a = (torch.rand(sa, dtype=torch.float64) * 2 - 1).requires_grad_(True)
    b = (torch.rand(sb, dtype=torch.float64) * 2 - 1).requires_grad_(True)
    y = torch.matmul(a, b)
    g = torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * g).sum().backward()
    cases.append({
        "a_shape": sa, "a": a.detach().flatten().tolist(),
        "b_shape": sb, "b": b.detach().flatten().tolist(),
        "y_shape": list(y.shape), "y": y.detach().flatten().tolist(),
        "ga": a.grad.flatten().tolist(), "gb": b.grad.flatten().tolist(),
    })
with open("nd/testdata/golden/goldens_matmul.json", "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print(len(cases), "cases")
