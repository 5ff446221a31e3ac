#!/usr/bin/python3
"""Golden values for Goluon's indexing, scan, sort and norm ops.

Run:  /usr/bin/python3 make_goldens_index.py   (writes goldens_index.json here)

Same JSON schema as make_goldens.py. Every case is float64 with a fixed
seed; index tensors are stored as float values under "tensors" (they get
no gradient). Each loss is sum(out * w) for a fixed random w (stored as
the tensor "w"), so every gradient element is exercised.
"""

import json
import os

import torch

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261124)


def rand(*shape):
    return (torch.rand(*shape, generator=gen) * 2 - 1).requires_grad_(True)


def t(x):
    return {"shape": list(x.shape), "data": [float(v) for v in x.detach().reshape(-1).tolist()]}


cases = []


def case(name, inputs, index, fn):
    """inputs: name -> float tensor requiring grad; index: name -> int tensor."""
    out = fn(**inputs, **index)
    extra = {}
    if isinstance(out, tuple):
        out, idx = out
        extra["indices"] = t(idx.double())
    w = torch.rand(out.shape, generator=gen) * 2 - 1
    loss = (out * w).sum()
    loss.backward()
    tensors = {k: t(v) for k, v in inputs.items()}
    tensors.update({k: t(v.double()) for k, v in index.items()})
    tensors["w"] = t(w)
    outputs = {"out": t(out)}
    outputs.update(extra)
    cases.append({
        "name": name,
        "tensors": tensors,
        "loss": float(loss),
        "grads": {k: t(v.grad) for k, v in inputs.items()},
        "outputs": outputs,
    })


idx_g = torch.tensor([[0, 2, 2, 1], [1, 1, 3, 0], [3, 3, 3, 3]])
case("gather_axis1", {"x": rand(3, 4)}, {"idx": idx_g},
     lambda x, idx: torch.gather(x, 1, idx))
case("scatter_add_axis1", {"x": rand(3, 4), "src": rand(3, 4)}, {"idx": idx_g},
     lambda x, src, idx: torch.scatter_add(x, 1, idx, src))
idx_t = torch.tensor([2, 0, 2, 3, 3])
case("take_axis1", {"x": rand(2, 4, 3)}, {"idx": idx_t},
     lambda x, idx: torch.index_select(x, 1, idx))
case("index_add_axis1", {"x": rand(2, 4, 3), "src": rand(2, 5, 3)}, {"idx": idx_t},
     lambda x, src, idx: x.index_add(1, idx, src))
case("topk_largest", {"x": rand(3, 7)}, {},
     lambda x: tuple(torch.topk(x, 3, dim=1, largest=True, sorted=True)))
case("topk_smallest_axis0", {"x": rand(6, 2)}, {},
     lambda x: tuple(torch.topk(x, 2, dim=0, largest=False, sorted=True)))
for d in range(3):
    case("cumsum_axis%d" % d, {"x": rand(3, 4, 2)}, {},
         lambda x, d=d: torch.cumsum(x, dim=d))
case("norm_l2_axis1", {"x": rand(3, 5)}, {},
     lambda x: torch.linalg.vector_norm(x, 2, dim=1))
case("norm_l1_axes02_keep", {"x": rand(2, 3, 4)}, {},
     lambda x: torch.linalg.vector_norm(x, 1, dim=(0, 2), keepdim=True))
zero_row = torch.cat([torch.zeros(1, 4), torch.rand(2, 4, generator=gen)]).requires_grad_(True)
case("norm_l2_zero_row", {"x": zero_row}, {},
     lambda x: torch.linalg.vector_norm(x, 2, dim=1))
big = (torch.rand(3, 5, generator=gen) * 4 + torch.tensor([[0.0], [1000.0], [-50.0]])).requires_grad_(True)
case("logsumexp_axis1", {"x": big}, {},
     lambda x: torch.logsumexp(x, dim=1))
case("logsumexp_all_keep", {"x": rand(2, 3)}, {},
     lambda x: torch.logsumexp(x, dim=(0, 1), keepdim=True))

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "goldens_index.json"), "w") as f:
    json.dump({"generator": "make_goldens_index.py, torch " + torch.__version__, "cases": cases}, f)
print("wrote", len(cases), "cases")
