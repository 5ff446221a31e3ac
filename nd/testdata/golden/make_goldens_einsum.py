#!/usr/bin/python3
"""Goldens for einsum_test.go: torch.einsum (Debian's python3-torch) in
float64 on equations of every kind (products, batches, transposes,
diagonals, sums, outer products, "..." broadcasting, three operands), with
the gradients of sum(y * g) with respect to every operand for a fixed g.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_einsum.py
It writes nd/testdata/golden/goldens_einsum.json.
"""
import json

import torch

torch.manual_seed(17)
cases = [
    ("ij,jk->ik", [[2, 3], [3, 4]]),
    ("bij,bjk->bik", [[2, 2, 3], [2, 3, 4]]),
    ("ij->ji", [[2, 3]]),
    ("ij->", [[2, 3]]),
    ("ij->j", [[2, 3]]),
    ("ii->i", [[3, 3]]),
    ("ii", [[3, 3]]),
    ("i,j->ij", [[2], [3]]),
    ("i,i->", [[4], [4]]),
    ("ij,ij->ij", [[2, 3], [2, 3]]),
    ("ij,kj", [[2, 3], [4, 3]]),
    ("bhqd,bhkd->bhqk", [[2, 2, 3, 4], [2, 2, 5, 4]]),
    ("bhqk,bhkd->bqhd", [[2, 2, 3, 5], [2, 2, 5, 4]]),
    ("...ij,...jk->...ik", [[2, 1, 2, 3], [4, 3, 2]]),
    ("...i,i->...", [[2, 3, 4], [4]]),
    ("i...->...", [[3, 2, 2]]),
    ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
    ("abc,cd,bd->ad", [[2, 3, 4], [4, 5], [3, 5]]),
    ("iij,jk->ik", [[3, 3, 2], [2, 4]]),
    ("ijk,ikl->jl", [[2, 3, 4], [2, 4, 2]]),
    ("ij,j->i", [[3, 4], [4]]),
    ("bi,bi->b", [[3, 4], [1, 4]]),
]
out = []
for eq, shapes in cases:
    ops = [(torch.rand(s, dtype=torch.float64) * 2 - 1).requires_grad_(True) for s in shapes]
    y = torch.einsum(eq, *ops)
    g = torch.linspace(-1, 1, max(y.numel(), 1), dtype=torch.float64).reshape(y.shape)
    (y * g).sum().backward()
    out.append({
        "eq": eq,
        "shapes": shapes,
        "ops": [o.detach().flatten().tolist() for o in ops],
        "y_shape": list(y.shape), "y": y.detach().flatten().tolist(),
        "grads": [o.grad.flatten().tolist() for o in ops],
    })
with open("nd/testdata/golden/goldens_einsum.json", "w") as f:
    json.dump({"torch": torch.__version__, "cases": out}, f)
print(len(out), "cases")
