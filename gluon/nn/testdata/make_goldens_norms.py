#!/usr/bin/python3
"""Writes norms_goldens.json for gluon/nn's WeightNorm, SpectralNorm and
LocalResponseNorm (norms_golden_test.go).

Run from the repository root with Debian's python3-torch (1.13):

    /usr/bin/python3 gluon/nn/testdata/make_goldens_norms.py

Everything is float64, from a seeded generator.

weight_norm cases (torch.nn.utils.weight_norm): a layer, its weight and
bias, the g torch derives from that weight (init_g); then g and v are set
to other seeded values, and one forward and backward pass of a seeded head
gives the output and the gradients of the input, g, v and the bias.

spectral_norm cases (torch.nn.utils.parametrizations.spectral_norm): the
weight and the u, v torch drew and refined at registration; one
training-mode pass (output, gradients of the input, the weight and the
bias; u, v and sigma after it), two more training-mode passes (the output
of the third; u, v and sigma after them), then a predict-mode pass with
its gradients.

local_response_norm cases: nn.LocalResponseNorm on 3-, 4- and 5-D
inputs with odd and even sizes: input, head, output, input gradient.

norms_state_dict.safetensors is the float32 state_dict of a small network
that uses both kinds of weight_norm names and spectral_norm names (the
older torch.nn.utils ones and torch.nn.utils.parametrizations'), after two
training-mode passes; norms_goldens.json's "state_dict" entry holds an
input and the network's predict-mode output, so the Go test loads a real
torch file by name.
"""
import json
import os
import sys

import torch
import torch.nn as tnn
from torch.nn.utils import weight_norm
from torch.nn.utils.parametrizations import spectral_norm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testdata"))
from lenet_interop import write_safetensors  # noqa: E402
torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20260611)
torch.manual_seed(20260611)  # the u and v spectral_norm draws


def rand(*shape, lo=-1.0, hi=1.0):
    return lo + (hi - lo) * torch.rand(tuple(shape), generator=gen)


def enc(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def make_layer(kind):
    if kind == "dense":
        return tnn.Linear(5, 4), (3, 5)
    if kind == "conv2d":
        return tnn.Conv2d(3, 4, 3, padding=1), (2, 3, 5, 5)
    if kind == "conv1d":
        return tnn.Conv1d(2, 3, 3, stride=2), (2, 2, 7)
    if kind == "convT2d":
        return tnn.ConvTranspose2d(4, 3, 3, stride=2, padding=1), (2, 4, 3, 3)
    raise ValueError(kind)


def settle(layer):
    """Gives the layer's weight and bias seeded values."""
    with torch.no_grad():
        layer.weight.copy_(rand(*layer.weight.shape))
        layer.bias.copy_(rand(*layer.bias.shape))


def wn_case(name, kind, dim):
    layer, in_shape = make_layer(kind)
    settle(layer)
    weight = layer.weight.detach().clone()
    m = weight_norm(layer, dim=dim)
    init_g = m.weight_g.detach().clone()
    with torch.no_grad():
        m.weight_g.copy_(rand(*m.weight_g.shape, lo=0.5, hi=1.5))
        m.weight_v.copy_(rand(*m.weight_v.shape))
    x = rand(*in_shape).requires_grad_(True)
    y = m(x)
    head = rand(*y.shape)
    (y * head).sum().backward()
    return {"name": name, "kind": kind, "dim": -1 if dim is None else dim,
            "weight": enc(weight), "bias": enc(m.bias), "init_g": enc(init_g),
            "g": enc(m.weight_g), "v": enc(m.weight_v), "input": enc(x), "head": enc(head),
            "output": enc(y), "grad_input": enc(x.grad), "grad_g": enc(m.weight_g.grad),
            "grad_v": enc(m.weight_v.grad), "grad_bias": enc(m.bias.grad)}


def sn_state(m):
    p = m.parametrizations.weight
    w = p.original
    mat = w if p[0].dim == 0 else w.transpose(0, 1)
    mat = mat.reshape(mat.shape[0], -1)
    u, v = p[0]._u, p[0]._v
    sigma = torch.dot(u, torch.mv(mat, v))
    return {"u": enc(u), "v": enc(v), "sigma": float(sigma)}


def sn_case(name, kind, iters):
    layer, in_shape = make_layer(kind)
    settle(layer)
    m = spectral_norm(layer, n_power_iterations=iters)
    p = m.parametrizations.weight
    case = {"name": name, "kind": kind, "iterations": iters, "dim": p[0].dim,
            "weight": enc(p.original), "bias": enc(m.bias),
            "u0": enc(p[0]._u), "v0": enc(p[0]._v)}
    x = rand(*in_shape).requires_grad_(True)
    m.train()
    y = m(x)
    head = rand(*y.shape)
    (y * head).sum().backward()
    case.update({"input": enc(x), "head": enc(head), "output1": enc(y),
                 "grad_input": enc(x.grad), "grad_weight": enc(p.original.grad),
                 "grad_bias": enc(m.bias.grad), "after1": sn_state(m)})
    with torch.no_grad():
        m(x)
        y3 = m(x)
    case.update({"output3": enc(y3), "after3": sn_state(m)})
    m.eval()
    x.grad = None
    p.original.grad = None
    y = m(x)
    (y * head).sum().backward()
    case.update({"output_eval": enc(y), "grad_input_eval": enc(x.grad),
                 "grad_weight_eval": enc(p.original.grad), "after_eval": sn_state(m)})
    return case


def lrn_case(name, shape, size, alpha, beta, k):
    x = rand(*shape, lo=-3, hi=3).requires_grad_(True)
    y = tnn.LocalResponseNorm(size, alpha=alpha, beta=beta, k=k)(x)
    head = rand(*y.shape)
    (y * head).sum().backward()
    return {"name": name, "size": size, "alpha": alpha, "beta": beta, "k": k,
            "input": enc(x), "head": enc(head), "output": enc(y), "grad_input": enc(x.grad)}


class Net(tnn.Module):
    """Goluon's Sequential of the same layers names them conv0, lrn0,
    conv_transpose0, flatten0, dense0, dense1."""

    def __init__(self):
        super().__init__()
        self.conv0 = weight_norm(tnn.Conv2d(3, 4, 3, padding=1))
        self.lrn0 = tnn.LocalResponseNorm(3, alpha=0.5, k=2.0)
        self.conv_transpose0 = spectral_norm(tnn.ConvTranspose2d(4, 2, 2, stride=2))
        self.dense0 = torch.nn.utils.spectral_norm(tnn.Linear(128, 6))
        self.dense1 = weight_norm(tnn.Linear(6, 3), dim=None)

    def forward(self, x):
        x = self.conv_transpose0(self.lrn0(self.conv0(x)))
        return self.dense1(torch.tanh(self.dense0(x.flatten(1))))


def state_dict_case():
    m = Net().float()
    x = rand(2, 3, 4, 4).float()
    m.train()
    with torch.no_grad():
        m(x)
        m(x)
    m.eval()
    with torch.no_grad():
        y = m(x)
    write_safetensors(os.path.join(HERE, "norms_state_dict.safetensors"), m.state_dict())
    return {"keys": list(m.state_dict().keys()), "input": enc(x), "output": enc(y)}


def main():
    wn = [wn_case("dense-dim0", "dense", 0), wn_case("dense-dim1", "dense", 1),
          wn_case("dense-whole", "dense", None), wn_case("conv2d-dim0", "conv2d", 0),
          wn_case("conv1d-dim2", "conv1d", 2), wn_case("convT2d-dim0", "convT2d", 0)]
    sn = [sn_case("dense", "dense", 1), sn_case("dense-iter3", "dense", 3),
          sn_case("conv2d", "conv2d", 1), sn_case("convT2d", "convT2d", 1)]
    lrn = [lrn_case("3d-size3", (2, 6, 5), 3, 0.5, 0.75, 2.0),
           lrn_case("3d-size4", (2, 6, 5), 4, 1.0, 0.6, 1.0),
           lrn_case("4d-size5", (2, 7, 3, 4), 5, 0.8, 0.75, 1.5),
           lrn_case("4d-size2", (2, 7, 3, 4), 2, 0.3, 0.9, 1.0),
           lrn_case("4d-size8-wide", (1, 5, 2, 2), 8, 2.0, 0.5, 0.5),
           lrn_case("4d-defaults", (2, 4, 3, 3), 3, 1e-4, 0.75, 1.0),
           lrn_case("5d-size3", (2, 5, 2, 3, 3), 3, 0.4, 0.75, 1.0),
           lrn_case("5d-size4", (2, 5, 2, 3, 3), 4, 0.7, 0.65, 1.2)]
    out = {"torch": torch.__version__, "weight_norm": wn, "spectral_norm": sn, "lrn": lrn,
           "state_dict": state_dict_case()}
    with open(os.path.join(HERE, "norms_goldens.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
