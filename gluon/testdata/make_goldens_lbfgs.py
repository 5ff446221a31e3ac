#!/usr/bin/python3
"""Goldens for lbfgs_test.go: torch.optim.LBFGS (Debian's python3-torch,
float64), with its fixed step and with its strong-Wolfe line search, on the
Rosenbrock function, a small linear least-squares problem and badly scaled
quadratics: the parameters and the returned loss after each step.

Run from the repository root:
    /usr/bin/python3 gluon/testdata/make_goldens_lbfgs.py
It writes gluon/testdata/goldens_lbfgs.json.
"""
import json

import torch

torch.set_default_dtype(torch.float64)
torch.manual_seed(43)


def run(name, params, loss_fn, steps, **opts):
    opt = torch.optim.LBFGS(params, **opts)
    init = [p.detach().clone() for p in params]
    trace = []
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        loss = opt.step(closure)
        trace.append({"loss": float(loss), "params": [p.detach().reshape(-1).tolist() for p in params]})
    return {"name": name, "opts": opts, "init": [{"shape": list(p.shape), "data": p.reshape(-1).tolist()} for p in init],
            "steps": trace}


class Rosenbrock(torch.autograd.Function):
    """The Rosenbrock function with its gradient written out, so that the
    Go test computes bit for bit the same values: L-BFGS with a fixed step
    on this ill-conditioned function turns last-bit differences between
    two autograd engines into visible ones within a few dozen iterations."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        a, b = float(x[0]), float(x[1])
        return torch.tensor((1 - a) * (1 - a) + 100 * ((b - a * a) * (b - a * a)))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        a, b = float(x[0]), float(x[1])
        return g * torch.tensor([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)])


cases = []
x = torch.tensor([-1.5, 2.0], requires_grad=True)
cases.append(run("rosenbrock", [x], lambda: Rosenbrock.apply(x), 6))
x2 = torch.tensor([-1.2, 1.0], requires_grad=True)
cases.append(run("rosenbrock_lr", [x2], lambda: Rosenbrock.apply(x2), 4, lr=0.1, max_iter=30, history_size=5))
A = torch.randn(20, 4)
B = torch.randn(20, 3)
W = torch.randn(3, 4, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
ls = lambda: ((A @ W.T + b - B) ** 2).mean()
case = run("least_squares", [W, b], ls, 3, lr=0.5, max_iter=7, history_size=3, tolerance_change=1e-12)
case["data"] = {"A": A.reshape(-1).tolist(), "B": B.reshape(-1).tolist()}
cases.append(case)

# With the strong-Wolfe line search.
x3 = torch.tensor([-1.5, 2.0], requires_grad=True)
cases.append(run("rosenbrock_wolfe", [x3], lambda: Rosenbrock.apply(x3), 3, line_search_fn="strong_wolfe"))
W2 = torch.randn(3, 4, requires_grad=True)
b2 = torch.zeros(3, requires_grad=True)
ls2 = lambda: ((A @ W2.T + b2 - B) ** 2).mean()
case = run("least_squares_wolfe", [W2, b2], ls2, 3, line_search_fn="strong_wolfe", tolerance_change=1e-14,
           tolerance_grad=1e-12)
case["data"] = {"A": A.reshape(-1).tolist(), "B": B.reshape(-1).tolist()}
cases.append(case)

class Quadratic(torch.autograd.Function):
    """A badly scaled quadratic, ½Σ c·x², written out as Rosenbrock is:
    its strong-Wolfe line searches reach the zoom's safeguards (the
    insufficient-progress test and a bracket whose low end is its right
    end), which the quadratics above do not."""
    C = [1e-3, 1.0, 1e3, 1e4, 3.0]

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.tensor(sum(0.5 * c * float(v) * float(v) for c, v in zip(Quadratic.C, x)))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * torch.tensor([c * float(v) for c, v in zip(Quadratic.C, x)])


x4 = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0], requires_grad=True)
case = run("quadratic_wolfe", [x4], lambda: Quadratic.apply(x4), 3, line_search_fn="strong_wolfe")
case["data"] = {"C": Quadratic.C}
cases.append(case)
# Drawn at random from 40 such quadratics as one whose second step takes the
# line search through its zoom safeguards along torch's path.
Quadratic.C = [19.371678534207675, 1.6107479997220988, 0.0015697297476640357, 0.04047950740532357, 0.017397178223373035]
x5 = torch.tensor([0.506765224670648, 2.1660531651199495, 1.790633643464556, 1.7825853758129773, 1.8986242233641448],
                  requires_grad=True)
case = run("quadratic_wolfe_tight", [x5], lambda: Quadratic.apply(x5), 4, line_search_fn="strong_wolfe",
           tolerance_change=1e-14, tolerance_grad=1e-14)
case["data"] = {"C": Quadratic.C}
cases.append(case)

with open("gluon/testdata/goldens_lbfgs.json", "w") as fh:
    json.dump({"generator": "make_goldens_lbfgs.py, torch " + torch.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")
