#!/usr/bin/python3
"""Goldens for trig_test.go: torch's tan, asin, acos, atan, sinh, cosh,
asinh, acosh, atanh, log2, log10, exp2, erfinv, lgamma, digamma,
polygamma(1, ·), atan2 and hypot (Debian's
python3-torch) in float64, with the gradient of sum(y) with respect to each
input, at random points inside each domain and at its edges (±1, the
origin, infinities), where the values and gradients are infinities and
NaNs, and where a naive formula loses accuracy (log2 just above 1, acos
near ±1, subnormal inputs; torch's values there agree with mpmath).
Digamma and trigamma (digamma's gradient) come from mpmath: torch's
digamma is 7e-11 off at -199999.999999 and its trigamma 5e-10 off at 1.

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_trig.py
It writes nd/testdata/golden/goldens_trig.json.
"""
import json
import math

import mpmath

import torch

torch.manual_seed(29)
inf = math.inf


def enc(t):
    return [v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
            for v in t.detach().reshape(-1).tolist()]


def rand(lo, hi, n=6):
    return (lo + (hi - lo) * torch.rand(n, dtype=torch.float64)).tolist()


unary = {
    "Tan": (torch.tan, rand(-1.5, 1.5) + [0.0]),
    "Asin": (torch.asin, rand(-1, 1) + [0.0, 1.0, -1.0, 1.5]),
    "Acos": (torch.acos, rand(-1, 1) + [0.0, 1.0, -1.0, -1.5, 0.9999999, -0.9999999]),
    "Atan": (torch.atan, rand(-10, 10) + [0.0, inf, -inf, 1e200]),
    "Sinh": (torch.sinh, rand(-5, 5) + [0.0, 1e-8, 800.0]),
    "Cosh": (torch.cosh, rand(-5, 5) + [0.0, -800.0]),
    "Asinh": (torch.asinh, rand(-10, 10) + [0.0, 1e-8, inf, -inf]),
    "Acosh": (torch.acosh, rand(1, 10) + [1.0, 0.5, inf]),
    "Atanh": (torch.atanh, rand(-1, 1) + [0.0, 1.0, -1.0, 2.0]),
    "Log2": (torch.log2, rand(0.01, 100) + [1.0, 8.0, 0.0, -1.0, inf, 1.000000000001, 1.0000001, 1e-310]),
    "Log10": (torch.log10, rand(0.01, 100) + [1.0, 1000.0, 0.0, -1.0, 1.000000000001, 1e-310]),
    "Exp2": (torch.exp2, rand(-10, 10) + [0.0, 10.0, -inf, 2000.0]),
    "Erfinv": (torch.erfinv, rand(-1, 1) + [0.0, 1.0, -1.0, 1.5, 0.999999]),
    "Lgamma": (torch.lgamma, rand(-5, 20) + [1.0, 2.0, 0.5, 1e-8, -0.5, -2.5, 100.0, 1e6, 0.0, -3.0]),
    "Digamma": (torch.digamma, rand(-5, 20) + [1.0, 0.5, 1e-8, -0.5, -2.5, 9.99, 10.0, 100.0, 1e6, -3.0,
                                               -10000.00000001, -199999.999999, -1e15 + 0.5]),
    # Values from mpmath below (torch's polygamma(1, ·) is inexact, and at
    # -1e15 loops for ever); the lambda only gives the case a graph.
    "Trigamma": (lambda x: x * 0, rand(-5, 20) + [1.0, 0.5, 1e-4, -0.5, -2.5, 9.99, 10.0, 100.0, 1e6,
                                                                  -10000.00000001, -1e15 + 0.5]),
}
def trigamma_exact(v):
    """mpmath's ψ′ (torch's polygamma(1, ·) is 5e-10 off: 1.6449340676 at
    1 where π²/6 = 1.6449340668), +Inf at the poles."""
    if v <= 0 and v == int(v):
        return float("inf")
    mpmath.mp.dps = 40
    x = mpmath.mpf(v)
    if x < 0:  # the reflection (mpmath's own recurrence would take -x steps)
        return float(mpmath.pi ** 2 / mpmath.sin(mpmath.pi * x) ** 2 - mpmath.psi(1, 1 - x))
    return float(mpmath.psi(1, x))


def digamma_exact(v):
    """mpmath's ψ (by the reflection below 0): torch's digamma is 7e-11
    off at -199999.999999."""
    if v <= 0 and v == int(v):
        return float("-inf") if v == 0 else float("nan")
    mpmath.mp.dps = 40
    x = mpmath.mpf(v)
    if x < 0:
        return float(mpmath.psi(0, 1 - x) - mpmath.pi / mpmath.tan(mpmath.pi * x))
    return float(mpmath.psi(0, x))


cases = []
for name, (f, xs) in unary.items():
    x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    y = f(x)
    y.sum().backward()
    grad = x.grad
    if name == "Digamma":  # its value from mpmath, its gradient ψ′
        y = torch.tensor([digamma_exact(v) for v in xs], dtype=torch.float64)
        grad = torch.tensor([trigamma_exact(v) for v in xs], dtype=torch.float64)
    if name == "Trigamma":
        y = torch.tensor([trigamma_exact(v) for v in xs], dtype=torch.float64)
    cases.append({"op": name, "a": enc(x), "y": enc(y), "ga": enc(grad)})

for name, f in {"Atan2": torch.atan2, "Hypot": torch.hypot}.items():
    a = rand(-3, 3) + [0.0, 0.0, 1.0, -1.0, 0.0, -0.0, inf]
    b = rand(-3, 3) + [0.0, 1.0, 0.0, 0.0, -1.0, -1.0, 1.0]
    at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    y = f(at, bt)
    y.sum().backward()
    cases.append({"op": name, "a": enc(at), "b": enc(bt), "y": enc(y), "ga": enc(at.grad), "gb": enc(bt.grad)})

with open("nd/testdata/golden/goldens_trig.json", "w") as fh:
    json.dump({"generator": "make_goldens_trig.py, torch " + torch.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")
