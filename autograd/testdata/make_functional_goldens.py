"""Writes functional_goldens.json: torch.autograd.functional's vjp, jvp,
hvp, jacobian and hessian of fixed float64 functions at fixed points, for
autograd/functional_test.go. Run with /usr/bin/python3 (torch 1.13)."""
import json
import torch
from torch.autograd.functional import vjp, jvp, hvp, jacobian, hessian

torch.manual_seed(7)
d = torch.float64
A = torch.randn(4, 3, dtype=d)
x = torch.randn(3, dtype=d)
w = torch.randn(3, 5, dtype=d)
X = torch.randn(2, 3, dtype=d)


def f_vec(x):  # R^3 -> R^4
    return torch.tanh(A @ x) * x.sum()


def f_two(X, w):  # ([2,3], [3,5]) -> [2,5]
    return torch.softmax(X @ w, dim=1) * torch.sigmoid(X.sum(1, keepdim=True))


def f_scalar(x):
    return (torch.exp(x) * torch.sin(x)).sum() + x @ (A.T @ A) @ x + torch.log1p(x * x).sum()


def f_two_scalar(X, w):
    return torch.logsumexp(X @ w, dim=1).sum() + (w ** 3).sum() * 0.1


v_out = torch.randn(2, 5, dtype=d)
v_in = (torch.randn(2, 3, dtype=d), torch.randn(3, 5, dtype=d))
v_x = torch.randn(3, dtype=d)

g = {}
g["A"] = A.flatten().tolist()
g["x"] = x.tolist()
g["w"] = w.flatten().tolist()
g["X"] = X.flatten().tolist()
g["v_out"] = v_out.flatten().tolist()
g["v_in0"] = v_in[0].flatten().tolist()
g["v_in1"] = v_in[1].flatten().tolist()
g["v_x"] = v_x.tolist()
out, (a, b) = vjp(f_two, (X, w), v_out)
g["vjp_out"], g["vjp0"], g["vjp1"] = out.flatten().tolist(), a.flatten().tolist(), b.flatten().tolist()
out, t = jvp(f_two, (X, w), v_in)
g["jvp"] = t.flatten().tolist()
out, (a, b) = hvp(f_two_scalar, (X, w), v_in)
g["hvp_out"], g["hvp0"], g["hvp1"] = out.item(), a.flatten().tolist(), b.flatten().tolist()
g["jacobian"] = jacobian(f_vec, x).flatten().tolist()
g["hessian"] = hessian(f_scalar, x).flatten().tolist()
_, hv = hvp(f_scalar, x, v_x)
g["hessian_v"] = hv.tolist()

with open("functional_goldens.json", "w") as fh:
    json.dump(g, fh, indent=0)
