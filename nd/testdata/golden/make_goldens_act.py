#!/usr/bin/python3
"""Generate PyTorch golden values for Goluon's activations and
normalisations (nd/golden_act_test.go): LeakyReLU, PReLU, ELU, GELU (erf and
tanh), SiLU, LayerNorm, GroupNorm, InstanceNorm.

Run:  /usr/bin/python3 make_goldens_act.py   (writes goldens_act.json here)

Float64 on CPU with a fixed seed. Every case computes y = op(inputs) and
loss = sum(y * r) for a fixed random r of y's shape, and stores the loss,
y and the gradient of the loss with respect to every float input but r.
Inputs of the piecewise activations keep at least 0.05 away from 0.

Schema: {"generator", "cases": [{"name", "op", "params", "tensors",
"loss", "outputs": {"y"}, "grads"}]} (the goldenCase of nd/golden_test.go
plus op and params).
"""

import json
import math
import os

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261124)


def enc(t):
    t = t.detach().contiguous()
    data = [float(v) for v in t.reshape(-1).tolist()]
    assert all(math.isfinite(v) for v in data)
    return {"shape": list(t.shape), "data": data}


def rand(*shape, lo=-2.0, hi=2.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


def away(*shape):
    x = rand(*shape)
    return torch.where(x.abs() < 0.05, torch.sign(x) * 0.05 + (x == 0) * 0.05, x)


CASES = []


def case(name, op, params, inputs, fn):
    """inputs: dict name -> tensor (all get gradients); fn(**inputs) -> y."""
    ins = {k: v.clone().requires_grad_(True) for k, v in inputs.items()}
    y = fn(**ins)
    r = rand(*y.shape)
    loss = (y * r).sum()
    loss.backward()
    tensors = {k: enc(v) for k, v in ins.items()}
    tensors["r"] = enc(r)
    CASES.append({"name": name, "op": op, "params": params, "tensors": tensors,
                  "loss": float(loss), "outputs": {"y": enc(y)},
                  "grads": {k: enc(v.grad) for k, v in ins.items()}})


case("leaky_relu_0.1", "leaky_relu", {"slope": 0.1}, {"x": away(3, 4)},
     lambda x: F.leaky_relu(x, 0.1))
case("leaky_relu_0.3_3d", "leaky_relu", {"slope": 0.3}, {"x": away(2, 3, 2)},
     lambda x: F.leaky_relu(x, 0.3))
case("prelu_per_channel", "prelu", {"axis": 1}, {"x": away(2, 3, 4), "alpha": rand(3, lo=0.05, hi=0.5)},
     lambda x, alpha: F.prelu(x, alpha))
case("prelu_shared", "prelu", {"axis": 1}, {"x": away(4, 3), "alpha": rand(1, lo=0.05, hi=0.5)},
     lambda x, alpha: F.prelu(x, alpha))
case("elu_1", "elu", {"alpha": 1.0}, {"x": away(3, 4)}, lambda x: F.elu(x, 1.0))
case("elu_0.5", "elu", {"alpha": 0.5}, {"x": away(2, 5)}, lambda x: F.elu(x, 0.5))
case("gelu_erf", "gelu", {"tanh": False}, {"x": rand(3, 4, lo=-4, hi=4)}, lambda x: F.gelu(x))
case("gelu_tanh", "gelu", {"tanh": True}, {"x": rand(3, 4, lo=-4, hi=4)},
     lambda x: F.gelu(x, approximate="tanh"))
case("silu", "silu", {}, {"x": rand(3, 4, lo=-5, hi=5)}, lambda x: F.silu(x))

case("layer_norm_2d", "layer_norm", {"axis": -1, "eps": 1e-5},
     {"x": rand(3, 5), "gamma": rand(5, lo=0.5, hi=1.5), "beta": rand(5)},
     lambda x, gamma, beta: F.layer_norm(x, (5,), gamma, beta, 1e-5))
case("layer_norm_3d", "layer_norm", {"axis": -1, "eps": 1e-5},
     {"x": rand(2, 3, 4), "gamma": rand(4, lo=0.5, hi=1.5), "beta": rand(4)},
     lambda x, gamma, beta: F.layer_norm(x, (4,), gamma, beta, 1e-5))
case("layer_norm_no_affine", "layer_norm", {"axis": -1, "eps": 1e-3},
     {"x": rand(4, 6)}, lambda x: F.layer_norm(x, (6,), None, None, 1e-3))
case("layer_norm_axis1", "layer_norm", {"axis": 1, "eps": 1e-5},
     {"x": rand(2, 4, 3), "gamma": rand(4, lo=0.5, hi=1.5), "beta": rand(4)},
     lambda x, gamma, beta: F.layer_norm(x.transpose(1, 2), (4,), gamma, beta, 1e-5).transpose(1, 2))
case("group_norm_3d_2", "group_norm", {"groups": 2, "eps": 1e-5},
     {"x": rand(2, 4, 3), "gamma": rand(4, lo=0.5, hi=1.5), "beta": rand(4)},
     lambda x, gamma, beta: F.group_norm(x, 2, gamma, beta, 1e-5))
case("group_norm_4d_1", "group_norm", {"groups": 1, "eps": 1e-5},
     {"x": rand(2, 3, 2, 2), "gamma": rand(3, lo=0.5, hi=1.5), "beta": rand(3)},
     lambda x, gamma, beta: F.group_norm(x, 1, gamma, beta, 1e-5))
case("group_norm_4d_c", "group_norm", {"groups": 4, "eps": 1e-5},
     {"x": rand(2, 4, 2, 3), "gamma": rand(4, lo=0.5, hi=1.5), "beta": rand(4)},
     lambda x, gamma, beta: F.group_norm(x, 4, gamma, beta, 1e-5))
case("instance_norm_4d", "instance_norm", {"eps": 1e-5},
     {"x": rand(2, 3, 2, 3), "gamma": rand(3, lo=0.5, hi=1.5), "beta": rand(3)},
     lambda x, gamma, beta: F.instance_norm(x, weight=gamma, bias=beta, eps=1e-5))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens_act.json")
with open(path, "w") as f:
    f.write('{"generator": "make_goldens_act.py, torch %s", "cases": [\n' % torch.__version__)
    f.write(",\n".join(json.dumps(c) for c in CASES))
    f.write("\n]}\n")
print("wrote %d cases to %s" % (len(CASES), path))
