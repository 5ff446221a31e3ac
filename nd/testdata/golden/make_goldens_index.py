#!/usr/bin/python3
"""Generate PyTorch golden values for Goluon's indexing, sorting, scan,
norm, selection, reshaping and elementwise-math ops (nd/golden_index_test.go).

Run:  /usr/bin/python3 make_goldens_index.py   (writes goldens_index.json next to this file)

Everything is float64 on CPU with fixed seeds, so the output is deterministic.
No network access is needed.

Every case computes one float output y = op(inputs) and the loss
    loss = sum(y * r)
with r a fixed random tensor of y's shape (no grad), so that the gradients
of the float inputs are not trivial. Ops that also return positions (topk,
sort) store them as an int output "indices", compared exactly.

JSON schema (parsed by nd/golden_index_test.go):
{
  "generator": "make_goldens_index.py, torch <version>",
  "torch": "<version>",
  "cases": [
    {
      "name": "...",                 # unique
      "op": "...",                   # selects the Go expression
      "description": "...",          # the PyTorch expression
      "params": {...},               # op arguments: axis, k, largest, ...
      "tensors": {"<name>": {"shape": [...], "data": [flat row-major float64]}},
                                     # float inputs, and r
      "ints":  {"<name>": {"shape": [...], "data": [int, ...]}},   # index inputs
      "bools": {"<name>": {"shape": [...], "data": [bool, ...]}},  # masks
      "loss": <float>,
      "outputs": {"y": {...}},
      "int_outputs": {"indices": {...}},   # only topk and sort
      "grads": {"<name>": {...}}           # d loss / d t for every float input t but r
    }, ...
  ]
}
"""

import json
import math
import os

import torch

torch.set_default_dtype(torch.float64)


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------

def enc(t):
    """Encode a float tensor as {"shape": [...], "data": [flat row-major floats]}."""
    t = t.detach().to(torch.float64).contiguous()
    data = [float(v) for v in t.reshape(-1).tolist()]
    for v in data:
        if not math.isfinite(v):
            raise ValueError("non-finite value in golden tensor")
    return {"shape": list(t.shape), "data": data}


def enc_int(t):
    t = t.detach().to(torch.int64).contiguous()
    return {"shape": list(t.shape), "data": [int(v) for v in t.reshape(-1).tolist()]}


def enc_bool(t):
    t = t.detach().to(torch.bool).contiguous()
    return {"shape": list(t.shape), "data": [bool(v) for v in t.reshape(-1).tolist()]}


_seed = [5000]


def gen():
    """A fresh generator with the next fixed seed (one per case)."""
    _seed[0] += 1
    return torch.Generator().manual_seed(_seed[0])


def rnd(g, *shape, scale=1.0, shift=0.0):
    return torch.randn(tuple(shape), generator=g) * scale + shift


def uniform(g, lo, hi, *shape):
    return torch.rand(tuple(shape), generator=g) * (hi - lo) + lo


CASES = []


def case(name, op, description, params, floats, fn, ints=None, bools=None):
    """Run fn(**floats, **ints, **bools) -> y or (y, indices); the loss is
    sum(y * r) with a fixed random r; record everything."""
    assert all(c["name"] != name for c in CASES), name
    g = gen()
    ints = ints or {}
    bools = bools or {}
    for t in floats.values():
        t.requires_grad_(True)
    res = fn(**floats, **ints, **bools)
    idx = None
    if isinstance(res, tuple):
        res, idx = res
    r = rnd(g, *res.shape)
    loss = (res * r).sum()
    loss.backward()
    c = {
        "name": name,
        "op": op,
        "description": description,
        "params": params,
        "tensors": {k: enc(v) for k, v in floats.items()},
        "loss": float(loss.item()),
        "outputs": {"y": enc(res)},
        "grads": {k: enc(v.grad) for k, v in floats.items()},
    }
    c["tensors"]["r"] = enc(r)
    if not math.isfinite(c["loss"]):
        raise ValueError("non-finite loss in case " + name)
    if ints:
        c["ints"] = {k: enc_int(v) for k, v in ints.items()}
    if bools:
        c["bools"] = {k: enc_bool(v) for k, v in bools.items()}
    if idx is not None:
        c["int_outputs"] = {"indices": enc_int(idx)}
    CASES.append(c)


def has_repeat_along(idx, dim):
    """True if some slice of idx along dim repeats an index."""
    s, _ = idx.sort(dim)
    d = s.narrow(dim, 1, s.shape[dim] - 1) - s.narrow(dim, 0, s.shape[dim] - 1)
    return bool((d == 0).any())


def no_ties(x, dim):
    s, _ = x.detach().sort(dim)
    d = s.narrow(dim, 1, s.shape[dim] - 1) - s.narrow(dim, 0, s.shape[dim] - 1)
    return bool((d > 1e-9).all())


# ----------------------------------------------------------------------------
# gather, scatter_add, index_select, index_add
# ----------------------------------------------------------------------------

def cases_gather():
    for shape, dim, m in [((3, 4, 5), 1, 6), ((4, 3), 0, 5), ((2, 3, 4), -1, 7), ((2, 3, 4), 0, 2)]:
        g = gen()
        x = rnd(g, *shape)
        ishape = list(shape)
        ishape[dim] = m
        idx = torch.randint(0, shape[dim], ishape, generator=g)
        assert has_repeat_along(idx, dim), "gather: no repeated index"
        case("gather_%dd_axis%d" % (len(shape), dim), "gather",
             "y = torch.gather(x%s, %d, idx%s) (repeated indices; x.grad scatter-adds)"
             % (list(shape), dim, ishape),
             {"axis": dim}, {"x": x}, lambda x, idx, dim=dim: torch.gather(x, dim, idx),
             ints={"idx": idx})


def cases_scatter_add():
    for shape, dim, m in [((3, 4, 5), 1, 6), ((4, 3), 0, 7), ((2, 3, 4), -1, 5)]:
        g = gen()
        x = rnd(g, *shape)
        ishape = list(shape)
        ishape[dim] = m
        idx = torch.randint(0, shape[dim], ishape, generator=g)
        src = rnd(g, *ishape)
        assert has_repeat_along(idx, dim), "scatter_add: no repeated index"
        case("scatter_add_%dd_axis%d" % (len(shape), dim), "scatter_add",
             "y = torch.scatter_add(x%s, %d, idx%s, src%s) (repeated indices)"
             % (list(shape), dim, ishape, ishape),
             {"axis": dim}, {"x": x, "src": src},
             lambda x, src, idx, dim=dim: torch.scatter_add(x, dim, idx, src),
             ints={"idx": idx})


def cases_index_select():
    for shape, dim, idx in [((4, 5, 3), 1, [0, 3, 3, 1, 4, 0]),
                            ((5, 2), 0, [4, 4, 4, 2, 0, 1, 2]),
                            ((2, 3, 4), -1, [3, 0, 3])]:
        g = gen()
        x = rnd(g, *shape)
        idx = torch.tensor(idx, dtype=torch.int64)
        case("index_select_%dd_axis%d" % (len(shape), dim), "index_select",
             "y = torch.index_select(x%s, %d, idx=%s) == nd.Take(x, idx, axis, TakeClip)"
             % (list(shape), dim, idx.tolist()),
             {"axis": dim}, {"x": x}, lambda x, idx, dim=dim: torch.index_select(x, dim, idx),
             ints={"idx": idx})


def cases_index_add():
    for shape, dim, idx in [((4, 5, 3), 1, [2, 0, 2, 4]),
                            ((3, 4), 0, [1, 1, 0, 1, 2]),
                            ((2, 3, 4), -1, [3, 3, 0])]:
        g = gen()
        x = rnd(g, *shape)
        sshape = list(shape)
        sshape[dim] = len(idx)
        src = rnd(g, *sshape)
        idx = torch.tensor(idx, dtype=torch.int64)
        case("index_add_%dd_axis%d" % (len(shape), dim), "index_add",
             "y = x%s.index_add(%d, idx=%s, src%s)" % (list(shape), dim, idx.tolist(), sshape),
             {"axis": dim}, {"x": x, "src": src},
             lambda x, src, idx, dim=dim: x.index_add(dim, idx, src),
             ints={"idx": idx})


# ----------------------------------------------------------------------------
# topk, sort, cumsum
# ----------------------------------------------------------------------------

def cases_topk():
    for shape, k, dim, largest in [((3, 7), 3, 1, True), ((3, 7), 3, 1, False),
                                   ((4, 6, 5), 2, 0, True), ((4, 6, 5), 4, -1, False),
                                   ((2, 5, 3), 5, 1, True), ((2, 5, 3), 1, 1, False)]:
        g = gen()
        x = rnd(g, *shape)
        assert no_ties(x, dim), "topk: ties"
        case("topk_%dd_k%d_axis%d_%s" % (len(shape), k, dim, "largest" if largest else "smallest"),
             "topk",
             "values, indices = torch.topk(x%s, %d, dim=%d, largest=%s, sorted=True); y = values"
             % (list(shape), k, dim, largest),
             {"k": k, "axis": dim, "largest": largest}, {"x": x},
             lambda x, k=k, dim=dim, largest=largest:
                 tuple(torch.topk(x, k, dim=dim, largest=largest, sorted=True)))


def cases_sort():
    specs = [((3, 6), 1, False, False), ((3, 6), 1, True, False),
             ((4, 3, 5), 0, False, False), ((4, 3, 5), -1, True, False),
             ((3, 8), 1, False, True), ((3, 8), 1, True, True), ((6, 2, 3), 0, True, True)]
    for shape, dim, desc, ties in specs:
        g = gen()
        if ties:
            # few distinct values: the stable order of equal values decides
            # the indices and where the gradient goes
            x = torch.randint(0, 3, shape, generator=g).to(torch.float64) * 0.5 - 0.5
        else:
            x = rnd(g, *shape)
            assert no_ties(x, dim), "sort: ties"
        case("sort_%dd_axis%d_%s%s" % (len(shape), dim, "desc" if desc else "asc", "_ties" if ties else ""),
             "sort",
             "values, indices = torch.sort(x%s, dim=%d, descending=%s, stable=True); y = values%s"
             % (list(shape), dim, desc, " (repeated values)" if ties else ""),
             {"axis": dim, "descending": desc}, {"x": x},
             lambda x, dim=dim, desc=desc: tuple(torch.sort(x, dim=dim, descending=desc, stable=True)))


def cases_cumsum():
    for dim in [0, 1, 2, -1]:
        g = gen()
        x = rnd(g, 3, 4, 5)
        case("cumsum_axis%d" % dim, "cumsum", "y = torch.cumsum(x[3,4,5], %d)" % dim,
             {"axis": dim}, {"x": x}, lambda x, dim=dim: torch.cumsum(x, dim))


# ----------------------------------------------------------------------------
# norm, logsumexp, var, std
# ----------------------------------------------------------------------------

def dims_str(axes):
    return "all" if axes is None else "_".join(str(a) for a in axes)


def cases_norm():
    for ord_ in [1, 2]:
        for axes in [[1], [0, 2], [-1], None]:
            for keep in [False, True]:
                g = gen()
                x = rnd(g, 3, 4, 5)
                assert bool((x.abs() > 1e-6).all())
                case("norm_ord%d_axes_%s_%s" % (ord_, dims_str(axes), "keep" if keep else "drop"),
                     "norm",
                     "y = torch.linalg.vector_norm(x[3,4,5], ord=%d, dim=%s, keepdim=%s)"
                     % (ord_, axes, keep),
                     {"ord": ord_, "axes": axes, "keep": keep}, {"x": x},
                     lambda x, o=ord_, a=axes, k=keep: torch.linalg.vector_norm(
                         x, ord=o, dim=None if a is None else tuple(a), keepdim=k))
    # an all-zero slice: the L2 norm is 0 there and PyTorch's gradient is 0
    for axes, keep in [([1], False), ([0], True)]:
        g = gen()
        x = rnd(g, 3, 4)
        if axes == [1]:
            x[1, :] = 0
        else:
            x[:, 2] = 0
        case("norm_ord2_zero_slice_axes_%s_%s" % (dims_str(axes), "keep" if keep else "drop"), "norm",
             "y = torch.linalg.vector_norm(x[3,4], ord=2, dim=%s, keepdim=%s), one slice of x all zeros "
             "(norm 0, gradient 0 there)" % (axes, keep),
             {"ord": 2, "axes": axes, "keep": keep}, {"x": x},
             lambda x, a=axes, k=keep: torch.linalg.vector_norm(x, ord=2, dim=tuple(a), keepdim=k))


def cases_logsumexp():
    for axes in [[1], [0, 2], [-1], None]:
        for keep in [False, True]:
            g = gen()
            x = rnd(g, 3, 4, 5, scale=2.0)
            case("logsumexp_axes_%s_%s" % (dims_str(axes), "keep" if keep else "drop"), "logsumexp",
                 "y = torch.logsumexp(x[3,4,5], dim=%s, keepdim=%s)"
                 % ("all" if axes is None else tuple(axes), keep),
                 {"axes": axes, "keep": keep}, {"x": x},
                 lambda x, a=axes, k=keep: torch.logsumexp(
                     x, dim=tuple(range(x.dim())) if a is None else tuple(a), keepdim=k))
    g = gen()
    x = rnd(g, 4, 5)
    x[1] = x[1] + 1000        # exp would overflow without the max shift
    x[2] = x[2] - 1000        # exp would underflow to 0 without it
    x[3, 2] = 1000.0
    case("logsumexp_large_values", "logsumexp",
         "y = torch.logsumexp(x[4,5], dim=1); row 1 around +1000, row 2 around -1000, "
         "row 3 one element 1000 (stability)",
         {"axes": [1], "keep": False}, {"x": x},
         lambda x: torch.logsumexp(x, dim=1))


def cases_var_std():
    for op in ["var", "std"]:
        for axes in [[1], [0, 2], None]:
            for ddof in [1, 0]:
                for keep in [False, True]:
                    g = gen()
                    x = rnd(g, 3, 4, 5)
                    fn = torch.var if op == "var" else torch.std
                    case("%s_axes_%s_ddof%d_%s" % (op, dims_str(axes), ddof, "keep" if keep else "drop"), op,
                         "y = torch.%s(x[3,4,5], dim=%s, unbiased=%s, keepdim=%s)"
                         % (op, "all" if axes is None else tuple(axes), ddof == 1, keep),
                         {"axes": axes, "ddof": ddof, "keep": keep}, {"x": x},
                         lambda x, fn=fn, a=axes, d=ddof, k=keep: fn(
                             x, dim=tuple(range(x.dim())) if a is None else tuple(a),
                             unbiased=(d == 1), keepdim=k))


# ----------------------------------------------------------------------------
# where, masked_fill
# ----------------------------------------------------------------------------

def cases_where():
    g = gen()
    cond = torch.rand(2, 1, 4, generator=g) > 0.5
    while bool(cond.all()) or not bool(cond.any()):
        cond = torch.rand(2, 1, 4, generator=g) > 0.5
    a = rnd(g, 3, 4)
    b = rnd(g, 2, 3, 1)
    case("where_broadcast", "where",
         "y = torch.where(cond[2,1,4], a[3,4], b[2,3,1]) -> [2,3,4]; grads reduce over broadcast axes",
         {}, {"a": a, "b": b}, lambda a, b, cond: torch.where(cond, a, b), bools={"cond": cond})
    g = gen()
    cond = torch.rand(3, 4, generator=g) > 0.5
    a = rnd(g, 3, 4)
    b = rnd(g, 3, 4)
    case("where_same_shape", "where", "y = torch.where(cond[3,4], a[3,4], b[3,4])",
         {}, {"a": a, "b": b}, lambda a, b, cond: torch.where(cond, a, b), bools={"cond": cond})


def cases_masked_fill():
    for mshape in [(2, 1, 4), (2, 3, 4), (3, 4)]:
        g = gen()
        x = rnd(g, 2, 3, 4)
        mask = torch.rand(*mshape, generator=g) > 0.6
        assert bool(mask.any()) and not bool(mask.all())
        case("masked_fill_mask_%s" % "x".join(str(s) for s in mshape), "masked_fill",
             "y = x[2,3,4].masked_fill(mask%s, -1e9)" % list(mshape),
             {"value": -1e9}, {"x": x}, lambda x, mask: x.masked_fill(mask, -1e9),
             bools={"mask": mask})


# ----------------------------------------------------------------------------
# slicing with steps, flip, tile, repeat, swapaxes
# ----------------------------------------------------------------------------

def py_slice(x, ranges):
    """x[ranges] with Python's slice semantics, negative steps included
    (PyTorch's own slicing refuses them): index_select, per axis, of
    range(*slice.indices(n))."""
    y = x
    for d, r in enumerate(ranges):
        s = slice(r.get("begin"), r.get("end"), r.get("step"))
        idx = torch.tensor(list(range(*s.indices(x.shape[d]))), dtype=torch.int64)
        y = y.index_select(d, idx)
    return y


def cases_slice():
    specs = [
        ("x[1:5:2, ::-1, -3:]", (6, 4, 5),
         [{"kind": "spanstep", "begin": 1, "end": 5, "step": 2},
          {"kind": "every", "step": -1},
          {"kind": "from", "begin": -3}]),
        ("x[-1:0:-2, 1:3, ::2]", (6, 4, 5),
         [{"kind": "spanstep", "begin": -1, "end": 0, "step": -2},
          {"kind": "span", "begin": 1, "end": 3},
          {"kind": "every", "step": 2}]),
        ("x[:, 3:-9:-1, 4:0:-3]", (2, 5, 6),
         [{"kind": "all"},
          {"kind": "spanstep", "begin": 3, "end": -9, "step": -1},
          {"kind": "spanstep", "begin": 4, "end": 0, "step": -3}]),
        ("x[2:100:3, -2:]", (7, 5),
         [{"kind": "spanstep", "begin": 2, "end": 100, "step": 3},
          {"kind": "from", "begin": -2}]),
    ]
    for i, (expr, shape, ranges) in enumerate(specs):
        g = gen()
        x = rnd(g, *shape)
        if i == 0:
            # the same with PyTorch's own slicing and flip
            want = x[1:5:2].flip(1)[:, :, -3:]
            assert torch.equal(py_slice(x, ranges), want)
        case("slice_%d" % i, "slice",
             "y = %s on x%s, Python slice semantics (index_select of range(*slice.indices(n)) per axis)"
             % (expr, list(shape)),
             {"ranges": ranges}, {"x": x}, lambda x, ranges=ranges: py_slice(x, ranges))


def cases_flip():
    for axes in [[1], [0, 2], None]:
        g = gen()
        x = rnd(g, 2, 3, 4)
        case("flip_axes_%s" % dims_str(axes), "flip",
             "y = torch.flip(x[2,3,4], dims=%s)" % ("all" if axes is None else axes),
             {"axes": axes}, {"x": x},
             lambda x, a=axes: torch.flip(x, tuple(range(x.dim())) if a is None else tuple(a)))


def cases_tile():
    specs = [((2, 3, 4), [2, 1, 3], "x.repeat(2, 1, 3)", lambda x: x.repeat(2, 1, 3)),
             ((2, 3, 4), [2, 3], "torch.tile(x, (2, 3)) (reps padded with a leading 1)",
              lambda x: torch.tile(x, (2, 3))),
             ((3, 2), [2, 1, 3], "x.repeat(2, 1, 3) (a new leading axis)", lambda x: x.repeat(2, 1, 3))]
    for i, (shape, reps, expr, fn) in enumerate(specs):
        g = gen()
        x = rnd(g, *shape)
        # numpy.tile semantics
        assert torch.equal(fn(x), torch.tile(x, tuple(reps)))
        case("tile_%d" % i, "tile", "y = %s on x%s (numpy.tile semantics)" % (expr, list(shape)),
             {"reps": reps}, {"x": x}, fn)


def cases_repeat():
    for n, dim in [(2, 0), (2, 1), (3, 2), (2, -1)]:
        g = gen()
        x = rnd(g, 2, 3, 4)
        case("repeat_interleave_n%d_axis%d" % (n, dim), "repeat",
             "y = torch.repeat_interleave(x[2,3,4], %d, dim=%d)" % (n, dim),
             {"n": n, "axis": dim}, {"x": x},
             lambda x, n=n, dim=dim: torch.repeat_interleave(x, n, dim=dim))


def cases_swapaxes():
    for a, b in [(0, 2), (1, -1), (2, 1)]:
        g = gen()
        x = rnd(g, 2, 3, 4)
        case("swapaxes_%d_%d" % (a, b), "swapaxes",
             "y = torch.transpose(x[2,3,4], %d, %d)" % (a, b),
             {"axis": a, "axis2": b}, {"x": x}, lambda x, a=a, b=b: torch.transpose(x, a, b))


# ----------------------------------------------------------------------------
# elementwise math
# ----------------------------------------------------------------------------

def cases_math():
    tiny = torch.tensor([1e-12, -3e-9, 2.5e-6, -1e-4])
    specs = [
        ("erf", torch.erf, lambda g: torch.cat([rnd(g, 16, scale=1.5), torch.tensor([0.0, 4.5, -6.0, 1e-5])])),
        ("log1p", torch.log1p, lambda g: torch.cat([uniform(g, -0.9, 3.0, 16), tiny])),
        ("expm1", torch.expm1, lambda g: torch.cat([rnd(g, 16), tiny, torch.tensor([20.0, -30.0])])),
        ("sin", torch.sin, lambda g: torch.cat([uniform(g, -6.0, 6.0, 16), torch.tensor([0.0, 100.0])])),
        ("cos", torch.cos, lambda g: torch.cat([uniform(g, -6.0, 6.0, 16), torch.tensor([0.0, 100.0])])),
        ("rsqrt", torch.rsqrt, lambda g: torch.cat([uniform(g, 0.1, 5.0, 16), torch.tensor([1e-6, 1e6])])),
        ("reciprocal", torch.reciprocal,
         lambda g: uniform(g, 0.2, 3.0, 20) * (torch.randint(0, 2, (20,), generator=g) * 2 - 1)),
    ]
    for name, fn, make in specs:
        g = gen()
        x = make(g).reshape(2, -1)
        case("math_" + name, "unary", "y = torch.%s(x%s)" % (name, list(x.shape)),
             {"fn": name}, {"x": x}, lambda x, fn=fn: fn(x))


# ----------------------------------------------------------------------------

def main():
    for f in [cases_gather, cases_scatter_add, cases_index_select, cases_index_add,
              cases_topk, cases_sort, cases_cumsum,
              cases_norm, cases_logsumexp, cases_var_std,
              cases_where, cases_masked_fill,
              cases_slice, cases_flip, cases_tile, cases_repeat, cases_swapaxes,
              cases_math]:
        f()
    doc = {"generator": "make_goldens_index.py, torch " + torch.__version__,
           "torch": torch.__version__, "cases": CASES}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens_index.json")
    # one case a line, so that a regenerated file diffs case by case
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"}, allow_nan=False)
    with open(path, "w") as f:
        f.write(head[:-1] + ', "cases": [\n')
        f.write(",\n".join(json.dumps(c, allow_nan=False) for c in CASES))
        f.write("\n]}\n")
    json.load(open(path))
    print("wrote %s (%d bytes, %d cases), torch %s"
          % (path, os.path.getsize(path), len(CASES), torch.__version__))


if __name__ == "__main__":
    main()
