#!/usr/bin/python3
"""Goldens for matrix_test.go: torch's eye, linspace, tril, triu, diagonal,
diag_embed, outer, roll, meshgrid, searchsorted, bucketize, nonzero,
bincount and unique (Debian's python3-torch) in float64, with the gradient
of sum(y * head) with respect to every floating input for the
differentiable ones (head: a fixed ramp over y).

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_matrix.py
It writes nd/testdata/golden/goldens_matrix.json.
"""
import json

import torch

torch.manual_seed(31)
torch.set_default_dtype(torch.float64)


def enc(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()],
            "dtype": str(t.dtype).replace("torch.", "")}


def ramp(n):
    return torch.linspace(-1, 1, max(n, 1))[:n] if n > 1 else torch.ones(n)


cases = []


def case(op, args, inputs, f, grad=True):
    xs = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    ys = f(*xs)
    if not isinstance(ys, (list, tuple)):
        ys = [ys]
    grads = []
    if grad and any(x.requires_grad for x in xs):
        loss = sum((y * ramp(y.numel()).reshape(y.shape)).sum() for y in ys if y.is_floating_point())
        gs = torch.autograd.grad(loss, [x for x in xs if x.requires_grad], allow_unused=True)
        grads = [enc(g if g is not None else torch.zeros_like(x)) for g, x in zip(gs, [x for x in xs if x.requires_grad])]
    cases.append({"op": op, "args": args, "inputs": [enc(x) for x in inputs],
                  "outputs": [enc(y) for y in ys], "grads": grads})


for n, m, k in [(3, 3, 0), (3, 4, 1), (4, 2, -1), (2, 3, 5), (0, 3, 0)]:
    case("Eye", {"n": n, "m": m, "k": k}, [], lambda n=n, m=m, k=k: torch.ones(n, m).tril(k).triu(k) if n and m else torch.zeros(n, m))
for start, stop, num in [(0, 1, 5), (-3, 7, 7), (2, 2, 1), (1, -1, 4), (0, 10, 0), (0.1, 0.7, 13)]:
    case("Linspace", {"start": start, "stop": stop, "num": num}, [], lambda a=start, b=stop, n=num: torch.linspace(a, b, n))
x34 = torch.randn(2, 3, 4)
for k in [0, 1, -1, 3, -4]:
    case("Tril", {"k": k}, [x34], lambda x, k=k: torch.tril(x, k))
    case("Triu", {"k": k}, [x34], lambda x, k=k: torch.triu(x, k))
for off in [0, 1, -2, 5]:
    case("Diagonal", {"offset": off}, [x34], lambda x, o=off: torch.diagonal(x, o, -2, -1))
v23 = torch.randn(2, 3)
for off in [0, 2, -1]:
    case("DiagEmbed", {"offset": off}, [v23], lambda v, o=off: torch.diag_embed(v, o))
case("Outer", {}, [torch.randn(3), torch.randn(4)], torch.outer)
for shift, axis in [(1, 2), (-1, 1), (7, 2), (0, 0), (-5, 1)]:
    case("Roll", {"shift": shift, "axis": axis}, [x34], lambda x, s=shift, a=axis: torch.roll(x, s, a))
for ix in ["ij", "xy"]:
    case("Meshgrid", {"indexing": ix}, [torch.randn(2), torch.randn(3), torch.randn(4)],
         lambda a, b, c, ix=ix: list(torch.meshgrid(a, b, c, indexing=ix)))
    case("Meshgrid", {"indexing": ix}, [torch.randn(3), torch.randn(2)],
         lambda a, b, ix=ix: list(torch.meshgrid(a, b, indexing=ix)))
srt = torch.tensor([1.0, 3, 5, 7, 7, 9])
vals = torch.tensor([[0.0, 1, 3, 4], [7, 9, 10, 6]])
for right in [False, True]:
    case("Searchsorted", {"right": right}, [srt, vals], lambda s, v, r=right: torch.searchsorted(s, v, right=r), grad=False)
    rows = torch.tensor([[1.0, 2, 3], [2, 4, 6]])
    case("Searchsorted", {"right": right}, [rows, torch.tensor([[2.0, 0, 3.5], [4, 6, 7]])],
         lambda s, v, r=right: torch.searchsorted(s, v, right=r), grad=False)
    case("Bucketize", {"right": right}, [vals, srt], lambda v, b, r=right: torch.bucketize(v, b, right=r), grad=False)
case("Nonzero", {}, [torch.tensor([[0.0, 1, 0], [2, 0, -3]])], torch.nonzero, grad=False)
case("Nonzero", {}, [torch.zeros(2, 2)], torch.nonzero, grad=False)
xi = torch.tensor([0, 3, 1, 1, 3, 3, 0])
case("Bincount", {"min_length": 0}, [xi], lambda x: torch.bincount(x), grad=False)
case("Bincount", {"min_length": 6}, [xi], lambda x: torch.bincount(x, minlength=6), grad=False)
w7 = torch.randn(7)
assert torch.equal(torch.bincount(xi, w7), torch.zeros(4).index_add(0, xi, w7))
# bincount has no derivative in torch: its weighted form is index_add's.
case("Bincount", {"min_length": 0}, [xi, w7], lambda x, w: torch.zeros(4).index_add(0, x, w))
case("Unique", {}, [torch.tensor([[3.0, 1, 2], [3, 1, 1]])],
     lambda x: list(torch.unique(x, sorted=True, return_inverse=True, return_counts=True)), grad=False)
case("Unique", {}, [torch.tensor([5, -2, 5, 0])],
     lambda x: list(torch.unique(x, sorted=True, return_inverse=True, return_counts=True)), grad=False)

with open("nd/testdata/golden/goldens_matrix.json", "w") as fh:
    json.dump({"generator": "make_goldens_matrix.py, torch " + torch.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")
