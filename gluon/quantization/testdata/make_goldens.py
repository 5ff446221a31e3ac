#!/usr/bin/python3
"""Goldens for gluon/quantization: PyTorch's dynamic int8 quantization of a
small MLP (torch.ao.quantization.quantize_dynamic with the default
per-tensor qconfig, and with per_channel_dynamic_qconfig), and the
activation quantization parameters torch chooses.

Run with Debian's /usr/bin/python3 (python3-torch 1.13):

    /usr/bin/python3 make_goldens.py > goldens.json

The x86 engine is whatever torch.backends.quantized picks (fbgemm where
torch was built with it, else onednn; Debian's build has onednn): both
quantize the activations per call with reduce_range (0..127) on x86 and
the weights symmetric int8; the golden records which engine ran.
"""
import json
import sys

import torch
from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

torch.manual_seed(0)
engine = torch.backends.quantized.engine


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(30, 64)  # K = 30: not a multiple of 4
        self.fc2 = torch.nn.Linear(64, 48)
        self.fc3 = torch.nn.Linear(48, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def ints(t):
    return [int(v) for v in t.reshape(-1).tolist()]


m = MLP().eval()
with torch.no_grad():  # a weight with a larger outlier row, so per-channel differs
    m.fc2.weight[5] *= 4
q = quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
qpc = quantize_dynamic(m, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)

layers = []
for name in ["fc1", "fc2", "fc3"]:
    f, ql, qc = getattr(m, name), getattr(q, name), getattr(qpc, name)
    w, _ = ql._packed_params._weight_bias()
    wc, _ = qc._packed_params._weight_bias()
    layers.append({
        "name": name, "in": f.in_features, "out": f.out_features,
        "weight": flat(f.weight), "bias": flat(f.bias),
        "qweight": ints(w.int_repr()), "scale": float(w.q_scale()),
        "qweight_pc": ints(wc.int_repr()), "scales_pc": flat(wc.q_per_channel_scales().float()),
    })

g = torch.Generator().manual_seed(1)
inputs = {
    "batch7": torch.randn(7, 30, generator=g) * 2 + 0.3,
    "batch1": torch.randn(1, 30, generator=g),
    "batch32": torch.randn(32, 30, generator=g) * 0.5,
    "zeros": torch.zeros(3, 30),
    "positive": torch.rand(4, 30, generator=g) + 0.5,
    "negative": -torch.rand(2, 30, generator=g) * 3,
    "tiny": torch.randn(5, 30, generator=g) * 1e-6,
}
out = {}
with torch.no_grad():
    for key, x in inputs.items():
        s, z = torch._choose_qparams_per_tensor(x, True)
        h1 = q.fc1(x)
        r1 = torch.relu(h1)
        h2 = q.fc2(r1)
        r2 = torch.relu(h2)
        out[key] = {
            "shape": list(x.shape), "x": flat(x),
            "qparams": [float(s), int(z)],
            "xq": ints(torch.quantize_per_tensor(x, s, z, torch.quint8).int_repr()),
            "h1": flat(h1), "h2": flat(h2), "y": flat(q.fc3(r2)),
            "h1_pc": flat(qpc.fc1(x)), "y_pc": flat(qpc(x)), "y_float": flat(m(x)),
        }

# Parameters for ranges: empty, tiny, one-sided, wide; both settings.
ranges = [(0, 0), (-1e-7, 1e-7), (0, 1e-6), (-1e-6, 0), (-3e-6, 1e-5), (0.5, 2), (-2, -0.5),
          (-1, 1), (-0.1, 10), (-1e4, 3), (-1.5, 1.5), (-2.5, 0.001), (-1e30, 1e30)]
qparams = []
for lo, hi in ranges:
    t = torch.tensor([lo, hi], dtype=torch.float32)
    for rr in [True, False]:
        s, z = torch._choose_qparams_per_tensor(t, rr)
        qparams.append({"lo": float(t[0]), "hi": float(t[1]), "reduce_range": rr, "scale": float(s), "zero": int(z)})

json.dump({"torch": torch.__version__, "engine": engine, "layers": layers, "inputs": out, "qparams": qparams},
          sys.stdout, separators=(",", ":"))
sys.stdout.write("\n")
