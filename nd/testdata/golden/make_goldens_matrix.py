#!/usr/bin/python3
"""Goldens for matrix_test.go: torch's eye, linspace, tril, triu, diagonal,
diag_embed, outer, roll, meshgrid, searchsorted, bucketize, nonzero,
bincount and unique, the reductions prod, any, all, count_nonzero,
median, quantile, normalize, cosine_similarity and cdist, the scans
cumprod, cummax, cummin and logcumsumexp, and unfold, fold and
adaptive_max_pool2d (Debian's python3-torch) in float64, with the gradient
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

# Reductions (nd/reduce_more.go).
xp = torch.randn(2, 5, 3)
xp[0, 2, 1] = 0.0
xp[1, 1, 0] = xp[1, 3, 0] = 0.0
for dims in [None, 1, (0, 2)]:
    case("Prod", {"axes": [] if dims is None else ([dims] if isinstance(dims, int) else list(dims))}, [xp],
         lambda x, d=dims: torch.prod(x) if d is None else (torch.prod(x, d) if isinstance(d, int) else torch.prod(torch.prod(x, d[1]), d[0])))
case("Prod", {"axes": [1]}, [torch.tensor([[2, 3, 4], [-1, 5, 0]])], lambda x: torch.prod(x, 1), grad=False)
bx = torch.tensor([[0.0, 1, 0], [0, 0, 0], [2, 3, -1]])
for d in [None, 1, 0]:
    for name, f in [("AnyTrue", torch.any), ("AllTrue", torch.all), ("CountNonzero", torch.count_nonzero)]:
        case(name, {"axes": [] if d is None else [d]}, [bx], lambda x, f=f, d=d: f(x) if d is None else f(x, d), grad=False)
xm = torch.randn(3, 6)
case("Median", {"axis": 1}, [xm], lambda x: list(torch.median(x, 1)))
case("Median", {"axis": 0}, [xm], lambda x: list(torch.median(x, 0)))
xn = torch.randn(2, 4)
xn[1, 2] = float("nan")
case("Median", {"axis": 1}, [xn], lambda x: list(torch.median(x, 1)), grad=False)
for q in [0.0, 0.25, 0.5, 0.9, 1.0]:
    case("Quantile", {"q": q, "axis": 1}, [xm], lambda x, q=q: torch.quantile(x, q, dim=1))
case("Quantile", {"q": 0.3, "axis": 1}, [xn], lambda x: torch.quantile(x, 0.3, dim=1), grad=False)
xz = torch.randn(3, 4)
xz[1] = 0.0
for p_ in [1, 2]:
    case("Normalize", {"p": p_, "axis": 1, "eps": 1e-12}, [xz], lambda x, p_=p_: torch.nn.functional.normalize(x, p_, 1, 1e-12))
case("CosineSimilarity", {"axis": 1, "eps": 1e-8}, [torch.randn(3, 4), torch.randn(1, 4)],
     lambda a, b: torch.nn.functional.cosine_similarity(a, b, 1, 1e-8))
case("CosineSimilarity", {"axis": 0, "eps": 1e-8}, [xz.T.contiguous(), torch.randn(4, 3)],
     lambda a, b: torch.nn.functional.cosine_similarity(a, b, 0, 1e-8))
ca, cb = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
cb[0, 1] = ca[0, 2]  # a zero distance
for p_ in [1.0, 2.0, float("inf")]:
    case("Cdist", {"p": p_ if p_ != float("inf") else "inf"}, [ca, cb], lambda a, b, p_=p_: torch.cdist(a, b, p_))

# NaN values go after every element, as torch's binary search places them.
nan_vals = torch.tensor([float("nan"), 2.0, 3.0])
for right in [False, True]:
    case("Searchsorted", {"right": right}, [torch.tensor([1.0, 2, 3]), nan_vals],
         lambda s, v, r=right: torch.searchsorted(s, v, right=r), grad=False)

# From a review: broadcasting along the reduced axis, tiny norms, infinite
# quantile ends, p = inf ties, empty features and empty products.
case("CosineSimilarity", {"axis": 0, "eps": 1e-8}, [torch.tensor([[1.0, 2, 3]]), torch.tensor([[1.0, 0, -1], [2, 2, 2]])],
     lambda a, b: torch.nn.functional.cosine_similarity(a, b, 0, 1e-8))
case("CosineSimilarity", {"axis": 0, "eps": 1e-8}, [torch.tensor([1.0, 2]), torch.tensor([[1.0, 0], [2, 2]])],
     lambda a, b: torch.nn.functional.cosine_similarity(a, b, 0, 1e-8))
case("CosineSimilarity", {"axis": 1, "eps": 1e-8}, [torch.tensor([[1e-5, 0, 0]]), torch.tensor([[1e-5, 0, 0]])],
     lambda a, b: torch.nn.functional.cosine_similarity(a, b, 1, 1e-8))
case("Quantile", {"q": 0.25, "axis": 0}, [torch.tensor([1.0, float("-inf"), float("inf"), 1])],
     lambda x: torch.quantile(x, 0.25, dim=0), grad=False)
case("Quantile", {"q": 0.75, "axis": 0}, [torch.tensor([1.0, float("-inf"), float("inf"), 1])],
     lambda x: torch.quantile(x, 0.75, dim=0), grad=False)
case("Cdist", {"p": "inf"}, [torch.tensor([[1.0, 1], [2, -3]]), torch.tensor([[0.0, 0], [1, 1]])], lambda a, b: torch.cdist(a, b, float("inf")))
case("Cdist", {"p": "inf"}, [torch.zeros(2, 0), torch.zeros(3, 0)], lambda a, b: torch.cdist(a, b, float("inf")))
case("Prod", {"axes": [1]}, [torch.zeros(2, 0)], lambda x: torch.prod(x, 1))
case("Prod", {"axes": [1]}, [torch.tensor([[2, 3], [4, 5]], dtype=torch.int32)], lambda x: torch.prod(x, 1), grad=False)

# Scans (nd/scan.go).
xc = torch.randn(3, 6)
xc[0, 2] = 0.0
xc[1, 1] = xc[1, 4] = 0.0
for ax in [1, 0]:
    case("Cumprod", {"axis": ax}, [xc], lambda x, a=ax: torch.cumprod(x, a))
case("Cumprod", {"axis": 0}, [torch.tensor([2, -3, 0, 4])], lambda x: torch.cumprod(x, 0), grad=False)
ties = torch.tensor([[1.0, 1, 0, 2, 2, -1], [3, -1, 3, 5, 4, 5]])
for name, f in [("Cummax", torch.cummax), ("Cummin", torch.cummin)]:
    case(name, {"axis": 1}, [ties], lambda x, f=f: list(f(x, 1)))
    case(name, {"axis": 0}, [torch.randn(5, 3)], lambda x, f=f: list(f(x, 0)))
    case(name, {"axis": 0}, [torch.tensor([1.0, float("nan"), 3, float("nan"), 0])], lambda x, f=f: list(f(x, 0)), grad=False)
    case(name, {"axis": 0}, [torch.tensor([3, 1, 4, 1, 5])], lambda x, f=f: list(f(x, 0)), grad=False)
ls = torch.tensor([[-1000.0, 0, 5, -3, 700, 1], [float("-inf"), float("-inf"), 2, float("-inf"), 2, 2]])
case("Logcumsumexp", {"axis": 1}, [ls], lambda x: torch.logcumsumexp(x, 1))
case("Logcumsumexp", {"axis": 0}, [torch.randn(7, 2)], lambda x: torch.logcumsumexp(x, 0))

# From a review: integer cumulative products are int64; an infinite term
# of a log-cumsum-exp leaves the others finite gradients.
case("Cumprod", {"axis": 0}, [torch.tensor([1000000, 3000000, -4000000], dtype=torch.int32)], lambda x: torch.cumprod(x, 0), grad=False)
case("Logcumsumexp", {"axis": 0}, [torch.tensor([1.0, float("inf"), 2, 0.5])], lambda x: torch.logcumsumexp(x, 0))

# Sliding blocks and adaptive max pooling (nd/unfold.go, nd/adaptive.go).
F = torch.nn.functional
xu = torch.randn(2, 3, 5, 6)
for k, st, pd, dl in [((2, 2), (1, 1), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 0), (1, 2)), ((2, 3), (2, 3), (1, 1), (2, 1))]:
    args = {"kernel": list(k), "stride": list(st), "pad": list(pd), "dilate": list(dl)}
    case("Unfold", args, [xu], lambda x, k=k, st=st, pd=pd, dl=dl: F.unfold(x, k, dl, pd, st))
    blocks = F.unfold(xu, k, dl, pd, st)
    case("Fold", dict(args, out=[5, 6]), [torch.randn(*blocks.shape)],
         lambda y, k=k, st=st, pd=pd, dl=dl: F.fold(y, (5, 6), k, dl, pd, st))
xa = torch.randn(2, 3, 7, 6)
for oh, ow in [(1, 1), (7, 3), (3, 4), (2, 5)]:
    case("AdaptiveMaxPool2D", {"out": [oh, ow]}, [xa], lambda x, oh=oh, ow=ow: F.adaptive_max_pool2d(x, (oh, ow)))

# Elementwise extras (nd/elementwise_more.go).
la, lb = torch.randn(2, 3), torch.randn(3)
for w in [0.3, 0.7, 1.0]:
    case("Lerp", {"w": w}, [la, lb], lambda a, b, w=w: torch.lerp(a, b, w))
lx = torch.tensor([-0.5, 0.0, 0.05, 0.3, 0.95, 1.0, 1.5])
case("Logit", {"eps": -1}, [lx], lambda x: torch.logit(x))
case("Logit", {"eps": 0.1}, [lx], lambda x: torch.logit(x, eps=0.1))
xx = torch.tensor([0.0, 0.0, 1.0, 2.0, 0.0, 0.5, 0.0])
xy = torch.tensor([0.0, 2.0, 0.0, 3.0, float("nan"), 0.25, -1.0])
case("Xlogy", {}, [xx, xy], torch.xlogy)
case("Xlogy", {}, [torch.rand(2, 3), torch.rand(3) + 0.1], torch.xlogy)
nx = torch.tensor([float("nan"), float("inf"), float("-inf"), 2.0, -1.0])
case("NanToNum", {"defaults": True}, [nx], torch.nan_to_num)
case("NanToNum", {"nan": 1.5, "posinf": 9.0, "neginf": -9.0}, [nx], lambda x: torch.nan_to_num(x, 1.5, 9.0, -9.0))

with open("nd/testdata/golden/goldens_matrix.json", "w") as fh:
    json.dump({"generator": "make_goldens_matrix.py, torch " + torch.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")
