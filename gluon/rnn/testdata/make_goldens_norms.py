#!/usr/bin/python3
"""Writes norms_goldens.json for gluon/rnn's reparameterised-weight tests.

Run from the repository root with Debian's python3-torch (1.13):

    /usr/bin/python3 gluon/rnn/testdata/make_goldens_norms.py

Each case is a torch recurrent layer (float64, TNC) one of whose weights is
spectrally normalised (torch.nn.utils.parametrizations.spectral_norm) or
weight normalised (g·v/‖v‖ over every axis but 0, as
torch.nn.utils.weight_norm computes it), run for one training-mode forward
pass and backpropagated from random head gradients.

PyTorch computes a parametrised weight once per forward pass: one power
iteration per training-mode call, whatever the number of time steps. In
torch 1.13 a parametrization registered on an nn.LSTM's own weight is not
seen by the layer (it keeps the raw tensor in _flat_weights; so does
torch.nn.utils.stateless.functional_call), so the weight is parametrised
on a holder module, read once, and set as the layer's attribute in the
parameter's place (RNNBase.__setattr__ puts it in _flat_weights): torch's
own spectral norm, and torch's own recurrent layer.

The JSON holds, per case, the layer's state_dict before normalisation
("params"), the normalised weight's name, the power method's u and v
after registration ("u0", "v0") and after the pass ("u", "v"), the input,
the heads, the outputs, and the gradients of the input and of every
parameter (the normalised weight's under "<name>_orig", or "<name>_g" and
"<name>_v").
"""
import json
import os

import torch
from torch.nn.utils.parametrizations import spectral_norm

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn_tanh": torch.nn.RNN}


def tensor(t):
    t = t.detach().to(torch.float64).contiguous()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def case(name, mode, norm, weight, inp, hidden, layers, T, N, iters=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed + 1)
    m = LAYERS[mode](inp, hidden, num_layers=layers).double()
    params = {k: tensor(v) for k, v in m.state_dict().items()}
    w0 = getattr(m, weight).detach().clone()
    holder = torch.nn.Module()
    holder.weight = torch.nn.Parameter(w0.clone())
    out = {"name": name, "mode": mode, "norm": norm, "weight": weight, "iterations": iters,
           "config": {"input": inp, "hidden": hidden, "layers": layers}, "params": params}
    if norm == "spectral":
        spectral_norm(holder, "weight", n_power_iterations=iters)
        sn = holder.parametrizations.weight[0]
        out["u0"], out["v0"] = tensor(sn._u), tensor(sn._v)
        leaves = {weight + "_orig": holder.parametrizations.weight.original}
    else:  # weight norm over every axis but 0
        v = torch.nn.Parameter(w0.clone())
        gn = torch.nn.Parameter(torch.linalg.vector_norm(w0, dim=tuple(range(1, w0.dim())), keepdim=True))
        leaves = {weight + "_g": gn, weight + "_v": v}
    x = torch.randn(T, N, inp, generator=g, dtype=torch.float64, requires_grad=True)
    holder.train()
    m.train()
    if norm == "spectral":
        w = holder.weight  # one read: the power method runs `iters` times
    else:
        w = torch._weight_norm(leaves[weight + "_v"], leaves[weight + "_g"], 0)
    delattr(m, weight)
    setattr(m, weight, w)  # RNNBase.__setattr__: the layer computes with w
    outs = m(x)
    y, states = outs[0], outs[1] if isinstance(outs[1], tuple) else (outs[1],)
    outputs = [y, *states]
    heads = [torch.randn(o.shape, generator=g, dtype=torch.float64) for o in outputs]
    torch.autograd.backward(outputs, heads)
    out["inputs"] = {"x": tensor(x)}
    out["heads"] = [tensor(h) for h in heads]
    out["outputs"] = [tensor(o) for o in outputs]
    grads = {"x": tensor(x.grad)}
    for k, p in m.named_parameters():
        if k != weight:
            grads[k] = tensor(p.grad)
    for k, p in leaves.items():
        grads[k] = tensor(p.grad)
    out["grads"] = grads
    if norm == "spectral":
        out["u"], out["v"] = tensor(sn._u), tensor(sn._v)
    return out


def main():
    cases = [
        case("lstm-spectral-hh", "lstm", "spectral", "weight_hh_l0", 3, 4, 1, T=5, N=2, seed=11),
        case("gru-spectral-hh-l1-2iters", "gru", "spectral", "weight_hh_l1", 3, 5, 2, T=4, N=3, iters=2, seed=12),
        case("rnn-spectral-ih", "rnn_tanh", "spectral", "weight_ih_l0", 4, 3, 1, T=6, N=2, seed=13),
        case("lstm-weightnorm-hh", "lstm", "weight", "weight_hh_l0", 3, 4, 1, T=5, N=2, seed=14),
    ]
    with open(os.path.join(HERE, "norms_goldens.json"), "w") as f:
        json.dump({"cases": cases}, f)


if __name__ == "__main__":
    main()
