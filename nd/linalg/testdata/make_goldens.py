#!/usr/bin/python3
"""Goldens for linalg_test.go: torch.linalg's inv, det, slogdet, solve,
cholesky, eigh, svd, svdvals, matrix_norm, pinv, lstsq and qr (Debian's python3-torch) in float64 on random
well-conditioned batches, with the gradient of a fixed weighting of the
outputs (sum(y * head), head a ramp; for eigh and svd a loss of the
squared singular or eigen vectors, which does not depend on their signs).

Run from the repository root:
    /usr/bin/python3 nd/linalg/testdata/make_goldens.py
It writes nd/linalg/testdata/goldens.json.
"""
import json

import torch

torch.manual_seed(37)
torch.set_default_dtype(torch.float64)


def enc(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def ramp(t):
    n = t.numel()
    return (torch.linspace(-1, 1, n) if n > 1 else torch.ones(n)).reshape(t.shape)


def ramp2(t):
    """A head that is not a sum of a row and a column term: with orthonormal
    rows and columns, sum(v * v * ramp(v)) would be a constant."""
    return ramp(t) ** 2


def square(*shape):
    n = shape[-1]
    return torch.randn(*shape) + 3 * torch.eye(n)  # well conditioned


def spd(*shape):
    m = torch.randn(*shape)
    return m @ m.mT + shape[-1] * torch.eye(shape[-1])


cases = []


def case(op, inputs, f, loss=None):
    xs = [x.clone().requires_grad_(True) for x in inputs]
    ys = f(*xs)
    if not isinstance(ys, (list, tuple)):
        ys = [ys]
    if loss is None:
        total = sum((y * ramp(y)).sum() for y in ys if y.requires_grad)
    else:
        total = loss(*ys)
    gs = torch.autograd.grad(total, xs)
    cases.append({"op": op, "inputs": [enc(x) for x in inputs], "outputs": [enc(y) for y in ys],
                  "grads": [enc(g) for g in gs]})


for shape in [(3, 3), (2, 4, 4), (1, 1)]:
    a = square(*shape)
    case("Inv", [a], torch.linalg.inv)
    case("Det", [a], torch.linalg.det)
    case("Slogdet", [a], lambda x: list(torch.linalg.slogdet(x)))
case("Det", [torch.tensor([[2.0, 1.0], [4.0, -3.0]])], torch.linalg.det)
case("Slogdet", [torch.tensor([[0.0, 2.0], [3.0, 1.0]])], lambda x: list(torch.linalg.slogdet(x)))
case("Solve", [square(3, 3), torch.randn(3, 2)], torch.linalg.solve)
case("Solve", [square(2, 3, 3), torch.randn(2, 3)], torch.linalg.solve)   # vectors
case("Solve", [square(2, 1, 3, 3), torch.randn(4, 3, 2)], torch.linalg.solve)  # broadcast batches
case("Solve", [square(3, 3), torch.randn(3)], torch.linalg.solve)
for shape in [(3, 3), (2, 4, 4)]:
    a = spd(*shape)
    case("Cholesky", [a], torch.linalg.cholesky)
    w, v = torch.linalg.eigh(a)
    hw = ramp(w)
    hv = ramp2(v)
    case("Eigh", [a], lambda x: list(torch.linalg.eigh(x)),
         loss=lambda w, v, hw=hw, hv=hv: (w * hw).sum() + (v * v * hv).sum())

for shape in [(4, 3), (3, 5), (2, 3, 3)]:
    a = torch.randn(*shape)
    u, sv, vh = torch.linalg.svd(a, full_matrices=False)
    hu, hs, hv = ramp2(u), ramp(sv), ramp2(vh)
    case("Svd", [a], lambda x: list(torch.linalg.svd(x, full_matrices=False)),
         loss=lambda u, s, v, hu=hu, hs=hs, hv=hv: (u * u * hu).sum() + (s * hs).sum() + (v * v * hv).sum())
    case("Svdvals", [a], torch.linalg.svdvals)
    for ord_ in ["fro", "nuc", 2]:
        case("MatrixNorm" + str(ord_), [a], lambda x, o=ord_: torch.linalg.matrix_norm(x, o))
    case("Pinv", [a], torch.linalg.pinv)
case("Lstsq", [torch.randn(5, 3), torch.randn(5, 2)], lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd").solution)
case("Lstsq", [torch.randn(2, 6, 3), torch.randn(2, 6, 1)], lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd").solution)
for shape in [(4, 3), (3, 3), (2, 5, 2)]:
    case("Qr", [torch.randn(*shape)], lambda x: list(torch.linalg.qr(x)))

# Singular values repeated or zero: the gradients of svdvals and the
# nuclear norm are still defined.
for a in [torch.eye(3), torch.tensor([[3.0, 0], [0, 0], [0, 0]]), torch.zeros(2, 3)]:
    case("Svdvals", [a], torch.linalg.svdvals)
    case("MatrixNormnuc", [a], lambda x: torch.linalg.matrix_norm(x, "nuc"))

# Exact determinants; eigenvalues alone of matrices with repeated ones.
for a in [torch.tensor([[3.0]]), torch.tensor([[2.0, 1], [1, 2]]), 2 * torch.eye(4), torch.diag(torch.tensor([7.0, 5]))]:
    case("Det", [a], torch.linalg.det)
for a in [torch.eye(3), torch.diag(torch.tensor([1.0, 1, 2]))]:
    case("Eigvals", [a], lambda x: torch.linalg.eigh(x)[0])

with open("nd/linalg/testdata/goldens.json", "w") as fh:
    json.dump({"generator": "make_goldens.py, torch " + torch.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")
