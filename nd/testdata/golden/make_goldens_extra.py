#!/usr/bin/python3
"""Goldens for golden_extra_test.go: torch's kron, linalg.cross, tensordot,
block_diag, cartesian_prod, vander, diff, rot90, trapezoid,
cumulative_trapezoid, cov, corrcoef, histc, nn.functional.pdist, gcd, lcm
and nn.functional.affine_grid (Debian's python3-torch), in float64 unless
a case says otherwise, with the gradient of sum(y * head) with respect to
every floating input for the differentiable ones (head: a fixed ramp over
y, torch.linspace(-1, 1, y.numel())), and calls torch rejects (the case
holds the first line of torch's message instead of outputs).

Run from the repository root:
    /usr/bin/python3 nd/testdata/golden/make_goldens_extra.py
It writes nd/testdata/golden/goldens_extra.json.
"""
import json
import warnings

import torch

torch.manual_seed(47)
torch.set_default_dtype(torch.float64)
F = torch.nn.functional
warnings.simplefilter("ignore")  # cov's "degrees of freedom <= 0", affine_grid's unit sizes


def enc(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": [jnum(float(v)) for v in t.reshape(-1).tolist()],
            "dtype": str(t.dtype).replace("torch.", "")}


def jnum(v):
    """JSON has no NaN or infinities: they are written as strings."""
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def ramp(n):
    return torch.linspace(-1, 1, n) if n > 1 else torch.ones(n)


cases = []


def case(op, args, inputs, f, grad=True):
    xs = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    ys = f(*xs)
    if not isinstance(ys, (list, tuple)):
        ys = [ys]
    grads = []
    if grad and any(x.requires_grad for x in xs):
        loss = sum((y * ramp(y.numel()).to(y.dtype).reshape(y.shape)).sum() for y in ys if y.is_floating_point())
        need = [x for x in xs if x.requires_grad]
        gs = torch.autograd.grad(loss, need, allow_unused=True)
        grads = [enc(g if g is not None else torch.zeros_like(x)) for g, x in zip(gs, need)]
    cases.append({"op": op, "args": args, "inputs": [enc(x) for x in inputs],
                  "outputs": [enc(y) for y in ys], "grads": grads})


# Products (nd/products.go).
case("Kron", {}, [torch.randn(2, 3), torch.randn(3, 2)], torch.kron)
case("Kron", {}, [torch.randn(2), torch.randn(2, 3)], torch.kron)
case("Kron", {}, [torch.randn(2, 1, 2), torch.randn(3, 2)], torch.kron)
case("Kron", {}, [torch.tensor(1.5), torch.randn(2, 2)], torch.kron)
case("Kron", {}, [torch.tensor([[1, -2], [3, 0]]), torch.tensor([2, 5, -1])], torch.kron, grad=False)
for sa, sb, dim in [((4, 3), (4, 3), -1), ((3, 4), (3, 4), 0), ((1, 3), (4, 3), 1),
                    ((2, 1, 3), (1, 4, 3), -1), ((3, 2, 1), (3, 1, 2), 0)]:
    case("Cross", {"dim": dim}, [torch.randn(*sa), torch.randn(*sb)], lambda a, b, d=dim: torch.linalg.cross(a, b, dim=d))
case("Cross", {"dim": -1}, [torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])], lambda a, b: torch.linalg.cross(a, b), grad=False)
for sa, sb, da, db in [((2, 3, 4), (4, 3, 5), [1, 2], [1, 0]), ((2, 3), (4, 5), [], []),
                       ((2, 3, 4), (4, 3), [-1, -2], [0, -1]), ((2, 1), (3, 5), [1], [0]),
                       ((3, 2), (1, 4), [0], [0]), ((2, 3), (3, 2), [0, 1], [1, 0])]:
    case("Tensordot", {"dimsA": da, "dimsB": db}, [torch.randn(*sa), torch.randn(*sb)],
         lambda a, b, da=da, db=db: torch.tensordot(a, b, dims=(da, db)))

# Assembled arrays (nd/blocks.go).
case("BlockDiag", {}, [torch.tensor(1.5), torch.randn(3), torch.randn(2, 2)], torch.block_diag)
case("BlockDiag", {}, [torch.randn(2, 3), torch.zeros(0, 2), torch.randn(1, 1), torch.zeros(2, 0)], torch.block_diag)
case("BlockDiag", {}, [torch.randn(3, 2)], torch.block_diag)
case("BlockDiag", {}, [torch.tensor([[1, 2]]), torch.tensor([3])], torch.block_diag, grad=False)
case("CartesianProd", {}, [torch.randn(2), torch.randn(3)], torch.cartesian_prod)
case("CartesianProd", {}, [torch.randn(2), torch.randn(1), torch.randn(3)], torch.cartesian_prod)
case("CartesianProd", {}, [torch.randn(4)], torch.cartesian_prod)
case("CartesianProd", {}, [torch.tensor([1, 2]), torch.tensor([3, 4, 5])], torch.cartesian_prod, grad=False)
xv = torch.tensor([0.5, -1.25, 0.0, 2.0])


def vander(x, n, inc):
    """torch.vander's own steps (ones, then cumprod of x), out of place: in
    torch 1.13 vander writes into the cumprod's input, and its backward
    fails on that."""
    n = x.numel() if n is None else n
    cols = [torch.ones(x.numel(), 1)]
    if n > 1:
        cols.append(torch.cumprod(x.unsqueeze(1).expand(-1, n - 1), 1))
    out = torch.cat(cols, 1)
    return out if inc else out.flip(1)


for n, inc in [(None, False), (None, True), (6, False), (2, True), (3, False)]:
    assert torch.equal(vander(xv, n, inc), torch.vander(xv, n, inc))
    case("Vander", {"n": -1 if n is None else n, "increasing": inc}, [xv], lambda x, n=n, inc=inc: vander(x, n, inc))
for n in [0, 1]:
    case("Vander", {"n": n, "increasing": False}, [xv], lambda x, n=n: torch.vander(x, n), grad=False)
case("Vander", {"n": 4, "increasing": False}, [torch.tensor([2, -3, 0], dtype=torch.int32)], lambda x: torch.vander(x, 4), grad=False)

# Differences, rotations and integrals (nd/calculus.go).
x35 = torch.randn(3, 5)
case("Diff", {"n": 1, "dim": -1}, [x35], lambda x: torch.diff(x))
case("Diff", {"n": 2, "dim": 0, "prepend": True, "append": True}, [x35, torch.randn(2, 5), torch.randn(1, 5)],
     lambda x, p, a: torch.diff(x, 2, 0, p, a))
case("Diff", {"n": 3, "dim": 1, "prepend": True}, [x35, torch.randn(3, 1)], lambda x, p: torch.diff(x, 3, 1, prepend=p))
case("Diff", {"n": 0, "dim": 1, "append": True}, [x35, torch.randn(3, 2)], lambda x, a: torch.diff(x, 0, 1, append=a))
case("Diff", {"n": 7, "dim": -1}, [x35], lambda x: torch.diff(x, 7, -1))
case("Diff", {"n": 5, "dim": -1}, [x35], lambda x: torch.diff(x, 5, -1))
case("Diff", {"n": 2, "dim": 0}, [torch.tensor([1, 5, 2, -4])], lambda x: torch.diff(x, 2), grad=False)
case("Diff", {"n": 1, "dim": 0}, [torch.tensor([True, False, False, True])], lambda x: torch.diff(x), grad=False)
x234 = torch.randn(2, 3, 4)
for k, dims in [(1, [0, 1]), (2, [0, 1]), (3, [0, 1]), (-1, [0, 1]), (5, [2, 0]), (-2, [-1, -2]), (0, [1, 2]), (-7, [1, -1])]:
    case("Rot90", {"k": k, "dims": dims}, [x234], lambda x, k=k, d=dims: torch.rot90(x, k, d))
y35 = torch.randn(3, 5)
for dx, dim in [(1.0, -1), (0.5, 0), (-2.0, 1)]:
    case("Trapezoid", {"dx": dx, "dim": dim}, [y35], lambda y, dx=dx, d=dim: torch.trapezoid(y, dx=dx, dim=d))
    case("CumulativeTrapezoid", {"dx": dx, "dim": dim}, [y35], lambda y, dx=dx, d=dim: torch.cumulative_trapezoid(y, dx=dx, dim=d))
for name, f in [("Trapezoid", torch.trapezoid), ("CumulativeTrapezoid", torch.cumulative_trapezoid)]:
    case(name, {"dx": 1.0, "dim": 0}, [torch.randn(1, 3)], lambda y, f=f: f(y, dim=0))
    case(name, {"dx": 1.0, "dim": 0}, [torch.zeros(0, 3)], lambda y, f=f: f(y, dim=0), grad=False)
    xs = torch.cumsum(torch.rand(5), 0)
    case(name + "X", {"dim": -1}, [torch.randn(3, 5), xs], lambda y, x, f=f: f(y, x, dim=-1))
    case(name + "X", {"dim": 0}, [torch.randn(5, 2), xs], lambda y, x, f=f: f(y, x, dim=0))
    case(name + "X", {"dim": 1}, [torch.randn(2, 4, 3), torch.randn(2, 4, 3)], lambda y, x, f=f: f(y, x, dim=1))
    case(name + "X", {"dim": 2}, [torch.randn(4, 2, 3), torch.randn(2, 3)], lambda y, x, f=f: f(y, x, dim=2))
    case(name + "X", {"dim": 0}, [torch.randn(3, 4), torch.randn(3, 1)], lambda y, x, f=f: f(y, x, dim=0))
    case(name + "X", {"dim": 0}, [torch.randn(2, 3), torch.randn(3, 2, 3)], lambda y, x, f=f: f(y, x, dim=0))

# Covariance and correlation (nd/cov.go).
xc = torch.randn(3, 6)
fw = torch.tensor([1, 2, 0, 3, 1, 1])
aw = torch.rand(6) + 0.1
for corr in [1, 0, 2, -1]:
    case("Cov", {"correction": corr}, [xc], lambda x, c=corr: torch.cov(x, correction=c))
for corr in [1, 0, 3]:
    case("Cov", {"correction": corr, "fweights": True}, [xc, fw], lambda x, f, c=corr: torch.cov(x, correction=c, fweights=f))
    case("Cov", {"correction": corr, "aweights": True}, [xc, aw], lambda x, a, c=corr: torch.cov(x, correction=c, aweights=a))
    case("Cov", {"correction": corr, "fweights": True, "aweights": True}, [xc, fw, aw],
         lambda x, f, a, c=corr: torch.cov(x, correction=c, fweights=f, aweights=a))
case("Cov", {"correction": 1}, [torch.randn(7)], lambda x: torch.cov(x))
case("Cov", {"correction": 1}, [torch.randn(1, 4)], lambda x: torch.cov(x))
case("Cov", {"correction": 6}, [xc], lambda x: torch.cov(x, correction=6), grad=False)
case("Cov", {"correction": 1}, [torch.zeros(2, 0)], lambda x: torch.cov(x), grad=False)
case("Cov", {"correction": 1}, [torch.tensor(2.5)], lambda x: torch.cov(x), grad=False)
case("Corrcoef", {}, [xc], torch.corrcoef)
case("Corrcoef", {}, [torch.randn(5)], torch.corrcoef)
lin = torch.randn(8)
case("Corrcoef", {}, [torch.stack([lin, 2 * lin + 1, torch.randn(8)])], torch.corrcoef)
case("Corrcoef", {}, [torch.tensor([[1.0, 1, 1], [1, 2, 3]])], torch.corrcoef, grad=False)

# Histograms (nd/histc.go).
# No NaN: torch 1.13's CPU histc counts NaNs in bin 0 (its CUDA kernel and
# later versions skip them, as nd does).
hx = torch.tensor([0.0, 1, 2, 2, 3, -1, 5, 0.75, 2.9999, 1.5, float("inf"), 2.25])
case("Histc", {"bins": 4, "min": 0.0, "max": 3.0}, [hx], lambda x: torch.histc(x, 4, 0, 3), grad=False)
case("Histc", {"bins": 7, "min": -0.5, "max": 2.25}, [hx], lambda x: torch.histc(x, 7, -0.5, 2.25), grad=False)
hr = torch.randn(50)
case("Histc", {"bins": 10, "min": 0.0, "max": 0.0}, [hr], lambda x: torch.histc(x, 10), grad=False)
case("Histc", {"bins": 3, "min": 0.0, "max": 0.0}, [torch.tensor([2.0, 2, 2])], lambda x: torch.histc(x, 3), grad=False)
case("Histc", {"bins": 4, "min": 0.0, "max": 0.0}, [torch.zeros(0)], lambda x: torch.histc(x, 4), grad=False)
case("Histc", {"bins": 5, "min": 1.0, "max": 1.0}, [torch.tensor([[0.0, 1], [1.5, 2]])], lambda x: torch.histc(x, 5, 1, 1), grad=False)
# float32 bins computed in float32: values at and next to the edges.
h32 = torch.tensor([0.1, 0.2, 0.3, 0.30000001, 0.7, 0.9, 1.0, 0.0999999], dtype=torch.float32)
case("Histc", {"bins": 9, "min": 0.1, "max": 1.0}, [h32], lambda x: torch.histc(x, 9, 0.1, 1.0), grad=False)
case("Histc", {"bins": 10, "min": 0.0, "max": 0.0}, [torch.rand(64, dtype=torch.float32) * 3 - 1], lambda x: torch.histc(x, 10), grad=False)

# Pairwise distances (nd/pdist.go): rows 0 and 2 coincide (zero distance),
# rows 1 and 3 differ in one coordinate only, and row 4 ties in |d|.
xp = torch.randn(5, 3)
xp[2] = xp[0]
xp[3] = xp[1]
xp[3, 1] += 0.5
xp[4] = xp[0] + torch.tensor([0.75, -0.75, 0.25])
for p in [2.0, 1.0, 0.0, 0.5, 1.5, 3.0, float("inf")]:
    case("Pdist", {"p": p if p != float("inf") else "inf"}, [xp], lambda x, p=p: F.pdist(x, p))
case("Pdist", {"p": 2.0}, [torch.randn(1, 3)], lambda x: F.pdist(x), grad=False)
case("Pdist", {"p": 2.0}, [torch.randn(4, 0)], lambda x: F.pdist(x))

# Integer divisors (nd/gcd.go).
ga = torch.tensor([0, 6, -4, 7, 0, 48, -18, 1, 1071, 2**40 + 1])
gb = torch.tensor([0, -4, 6, 0, 5, 180, -12, -1, 462, 2**40 - 1])
for name, f in [("Gcd", torch.gcd), ("Lcm", torch.lcm)]:
    case(name, {}, [ga, gb], f, grad=False)
    case(name, {}, [torch.tensor([[4], [6], [-9]], dtype=torch.int32), torch.tensor([6, 9, 10, 0], dtype=torch.int32)], f, grad=False)
    case(name, {}, [torch.tensor([12, 0, 255, 100], dtype=torch.uint8), torch.tensor([18, 7, 85, 75], dtype=torch.uint8)], f, grad=False)

# Affine grids (nd/affinegrid.go).
for size in [[2, 3, 4, 5], [1, 1, 1, 3], [2, 1, 3, 1]]:
    for ac in [False, True]:
        case("AffineGrid", {"size": size, "align_corners": ac}, [torch.randn(size[0], 2, 3)],
             lambda t, s=size, ac=ac: F.affine_grid(t, s, align_corners=ac))
for size in [[2, 1, 2, 3, 4], [1, 2, 1, 2, 3]]:
    for ac in [False, True]:
        case("AffineGrid", {"size": size, "align_corners": ac}, [torch.randn(size[0], 3, 4)],
             lambda t, s=size, ac=ac: F.affine_grid(t, s, align_corners=ac))



def error_case(op, args, inputs, f):
    """Records that torch rejects the call: the case has its first line of
    the message and no outputs; the test wants an error from the op."""
    try:
        f(*inputs)
    except RuntimeError as e:
        cases.append({"op": op, "args": args, "inputs": [enc(x) for x in inputs], "outputs": [], "grads": [],
                      "error": str(e).splitlines()[0]})
        return
    raise AssertionError(op + ": torch raised no error")


# NaN and infinite coordinates in Pdist: p = 0 sums min(ceil(|d|), 1), NaN
# for a NaN difference, 1 for an infinite one.
xnan = torch.tensor([[0.0, 0], [float("nan"), 1], [1, 1], [float("inf"), 1]])
for p in [0.0, 0.5, 1.0, 2.0, 3.0, float("inf")]:
    case("Pdist", {"p": p if p != float("inf") else "inf"}, [xnan], lambda x, p=p: F.pdist(x, p), grad=p == 0)

# Weights torch rejects: a NaN aweight fails its aweights.min() >= 0.
error_case("Cov", {"correction": 1, "aweights": True},
           [torch.tensor([[1.0, 2, 4], [0, 3, 1]]), torch.tensor([1.0, float("nan"), 1])],
           lambda x, aw: torch.cov(x, aweights=aw))

# Histogram ranges empty after widening (1e20 ± 1 is 1e20: an error) or
# once rounded to the input's dtype ([1, 1 + 1e-12] in float32, the
# automatic range of [1e8, 1e8] widened in float32: the values on the edge
# go to bin 0), and ranges that widening or rounding leaves non-empty.
error_case("Histc", {"bins": 4, "min": 0.0, "max": 0.0}, [torch.tensor([1e20, 1e20])], lambda x: torch.histc(x, 4))
error_case("Histc", {"bins": 4, "min": 2.0, "max": 1.0}, [torch.tensor([1.0, 1.5])], lambda x: torch.histc(x, 4, 2, 1))
case("Histc", {"bins": 4, "min": 1.0, "max": 1 + 1e-12}, [torch.tensor([1.0, 1, 0.5, 2], dtype=torch.float32)],
     lambda x: torch.histc(x, 4, 1, 1 + 1e-12), grad=False)
case("Histc", {"bins": 4, "min": 0.0, "max": 0.0}, [torch.tensor([1e8, 1e8], dtype=torch.float32)],
     lambda x: torch.histc(x, 4), grad=False)
case("Histc", {"bins": 4, "min": 1.0, "max": 1 + 1e-7}, [torch.tensor([1.0, 1.0000001, 1], dtype=torch.float32)],
     lambda x: torch.histc(x, 4, 1, 1 + 1e-7), grad=False)
case("Histc", {"bins": 4, "min": 1.0, "max": 1 + 1e-12}, [torch.tensor([1.0, 1])], lambda x: torch.histc(x, 4, 1, 1 + 1e-12),
     grad=False)
case("Histc", {"bins": 4, "min": 0.0, "max": 0.0}, [torch.tensor([2.0**53, 2.0**53])], lambda x: torch.histc(x, 4), grad=False)

with open("nd/testdata/golden/goldens_extra.json", "w") as fh:
    json.dump({"generator": "make_goldens_extra.py, torch " + torch.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")
