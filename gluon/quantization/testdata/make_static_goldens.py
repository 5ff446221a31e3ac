#!/usr/bin/python3
"""Goldens for gluon/quantization's static quantization (golden_static_test.go):
PyTorch 1.13's eager post-training static quantization of a small CNN.

The network (NCHW 3×12×12 inputs): conv1 3→8 3×3 pad 1 + ReLU (fused:
ConvReLU2d); conv2 8→16 3×3 stride 2 pad 1, no bias, then a float ReLU;
conv3 16→16 3×3 pad 2 dilation 2, 4 groups + ReLU (fused); conv4 16→16
3×3 pad 1 depthwise (16 groups); conv5 16→12 1×1 + ReLU (fused); conv6
12→10 kernel 3×2 stride (2, 1) padding (1, 0); flatten; fc 150→10. Each
quantized layer sits between its own QuantStub and DeQuantStub, so that
it takes float inputs and gives float outputs like gluon/quantization's
layers.

qconfig: activations MinMaxObserver(reduce_range=True) (quint8,
per_tensor_affine, 0..127: torch's default observer and x86's
reduce_range), weights default_per_channel_weight_observer (qint8,
per_channel_symmetric, the x86 and onednn default for static
quantization). The engine is the default one (Debian's torch has onednn
and qnnpack, no fbgemm). prepare, two calibration batches, convert.

Written to static_goldens.json, per layer: its float weights and bias,
the range its observer saw, the input scale and zero point (and those a
MinMaxObserver without reduce_range gives for the same range), the int8
weights and per-channel scales (and per-tensor ones from
default_weight_observer); for each test input, the layer's input as the
quantized network ran it (the previous layer's dequantized output), its
quantized bytes, the exact int32 sums Σ(xq−zx)·wq (computed in float64
from the integer values: exact), and the quantized layer's output bytes
with its output scale and zero point. Also the calibration batches, the
whole quantized and float networks' outputs, and MinMaxObserver's
parameters for edge ranges and HistogramObserver's search on four data
sets whose range has integer ends.

Run from the repository root with Debian's /usr/bin/python3
(python3-torch 1.13):

    /usr/bin/python3 gluon/quantization/testdata/make_static_goldens.py
"""
import json
import os

import torch
from torch import nn
from torch.ao.quantization import (DeQuantStub, HistogramObserver, MinMaxObserver, QConfig, QuantStub,
                                   convert, default_per_channel_weight_observer,
                                   default_weight_observer, fuse_modules, prepare)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)

# name, module, float ReLU after (not fused)
SPECS = [
    ("conv1", lambda: nn.Conv2d(3, 8, 3, padding=1), "fused"),
    ("conv2", lambda: nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), "float"),
    ("conv3", lambda: nn.Conv2d(16, 16, 3, padding=2, dilation=2, groups=4), "fused"),
    ("conv4", lambda: nn.Conv2d(16, 16, 3, padding=1, groups=16), ""),
    ("conv5", lambda: nn.Conv2d(16, 12, 1), "fused"),
    ("conv6", lambda: nn.Conv2d(12, 10, (3, 2), stride=(2, 1), padding=(1, 0)), ""),
    ("fc", lambda: nn.Linear(150, 10), ""),
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        for name, make, act in SPECS:
            setattr(self, name, make())
            setattr(self, "q_" + name, QuantStub())
            setattr(self, "dq_" + name, DeQuantStub())
            if act == "fused":
                setattr(self, "relu_" + name, nn.ReLU())

    def forward(self, x, record=None):
        for name, _, act in SPECS:
            if name == "fc":
                x = torch.flatten(x, 1)
            inp = x
            q = getattr(self, "q_" + name)(x)
            y = getattr(self, name)(q)
            if act == "fused" and hasattr(self, "relu_" + name):
                y = getattr(self, "relu_" + name)(y)  # an Identity once fused
            x = getattr(self, "dq_" + name)(y)
            if record is not None:
                record[name] = (inp, q, y)
            if act == "float":
                x = torch.relu(x)
        return x


def f9(v):
    """v (a float32 value) in 9 significant digits, which round-trip."""
    return float("%.9g" % v)


def flat(t):
    return [f9(v) for v in t.detach().reshape(-1).tolist()]


def ints(t):
    return [int(v) for v in t.reshape(-1).tolist()]


net = Net().eval()
with torch.no_grad():  # outlier output channels, so that per-channel scales differ
    net.conv1.weight[2] *= 4
    net.conv3.weight[5] *= 3
    net.conv5.weight[0] *= 5
    net.fc.weight[7] *= 4
floatnet = Net().eval()
floatnet.load_state_dict(net.state_dict())

fuse_modules(net, [[n, "relu_" + n] for n, _, a in SPECS if a == "fused"], inplace=True)
net.qconfig = QConfig(activation=MinMaxObserver.with_args(reduce_range=True),
                      weight=default_per_channel_weight_observer)
prepare(net, inplace=True)

g = torch.Generator().manual_seed(1)
calib = [torch.randn(4, 3, 12, 12, generator=g) * 1.5 + 0.2,
         torch.rand(4, 3, 12, 12, generator=g) * 3 - 1]
with torch.no_grad():
    for x in calib:
        net(x)
observed = {}
for name, _, _ in SPECS:
    o = getattr(net, "q_" + name).activation_post_process
    observed[name] = (float(o.min_val), float(o.max_val))
qnet = convert(net)

tests = {
    "test": torch.randn(2, 3, 12, 12, generator=g),
    "outlier": torch.randn(2, 3, 12, 12, generator=g) * 4,  # beyond the calibrated range
}


def full_range_qparams(lo, hi):
    o = MinMaxObserver(reduce_range=False)
    o(torch.tensor([lo, hi], dtype=torch.float32))
    s, z = o.calculate_qparams()
    return f9(s), int(z)


layers = []
for name, make, act in SPECS:
    f, m = getattr(floatnet, name), getattr(qnet, name)
    w = m.weight()
    qs = getattr(qnet, "q_" + name)
    wobs = default_weight_observer()
    wobs(f.weight.detach())
    pts, _ = wobs.calculate_qparams()
    wpt = torch.quantize_per_tensor(f.weight.detach(), float(pts), 0, torch.qint8)
    lo, hi = observed[name]
    rec = {
        "name": name, "relu": act, "weight": flat(f.weight), "shape": list(f.weight.shape),
        "bias": flat(f.bias) if f.bias is not None else None,
        "lo": f9(lo), "hi": f9(hi), "scale": f9(qs.scale), "zero": int(qs.zero_point),
        "full": full_range_qparams(lo, hi),
        "qweight": ints(w.int_repr()), "wscales": flat(w.q_per_channel_scales().float()),
        "qweight_pt": ints(wpt.int_repr()), "wscale_pt": f9(wpt.q_scale()),
    }
    if isinstance(f, nn.Conv2d):
        rec.update({"stride": list(f.stride), "pad": list(f.padding), "dilation": list(f.dilation), "groups": f.groups})
    layers.append(rec)

outputs = {}
with torch.no_grad():
    for key, x in tests.items():
        record = {}
        y = qnet(x, record)
        per = {}
        for rec in layers:
            name = rec["name"]
            inp, q, out = record[name]
            f = getattr(floatnet, name)
            wq = getattr(qnet, name).weight().int_repr().double()
            xq = q.int_repr().double() - q.q_zero_point()
            if isinstance(f, nn.Conv2d):
                acc = torch.nn.functional.conv2d(xq, wq, None, f.stride, f.padding, f.dilation, f.groups)
            else:
                acc = xq @ wq.t()
            per[name] = {"shape": list(inp.shape), "x": flat(inp), "xq": ints(q.int_repr()),
                         "acc": ints(acc.round().long()), "yq": ints(out.int_repr()),
                         "out_scale": f9(out.q_scale()), "out_zero": int(out.q_zero_point())}
        outputs[key] = {"layers": per, "y": flat(y), "y_float": flat(floatnet(x))}

ranges = [(0, 0), (-1e-7, 1e-7), (0, 1e-6), (-1e-6, 0), (-3e-6, 1e-5), (0.5, 2), (-2, -0.5),
          (-1, 1), (-0.1, 10), (-1e4, 3), (-1.5, 1.5), (-2.5, 0.001), (-1e30, 1e30), (0, 6.1e-5),
          (-0.3333, 7.77), (-127, 0), (0, 127), (1e-20, 3e-20)]
qparams = []
for lo, hi in ranges:
    for rr in [True, False]:
        o = MinMaxObserver(reduce_range=rr)
        t = torch.tensor([lo, hi], dtype=torch.float32)
        o(t)
        s, z = o.calculate_qparams()
        qparams.append({"lo": f9(t[0]), "hi": f9(t[1]), "reduce_range": rr, "scale": f9(s), "zero": int(z)})

# HistogramObserver (reduce_range, one batch) on data whose range has
# integer ends, where torch 1.13's histogram (torch.histc over the range
# truncated to integers) covers the observed range: the range search and
# the parameters it gives.
hists = []
def laplace(n):
    u = torch.rand(n, generator=g) - 0.5
    return -torch.sign(u) * torch.log1p(-2 * u.abs())


for name, x in [
    ("normal", torch.cat([torch.tensor([-4.0, 4.0]), (torch.randn(2000, generator=g) * 1.5).clamp(-4, 4)])),
    ("relu", torch.cat([torch.tensor([6.0]), (torch.randn(2000, generator=g) * 2).clamp(0, 6)])),
    ("outlier", torch.cat([torch.tensor([-3.0, 20.0]), torch.randn(1500, generator=g).clamp(-3, 3)])),
    ("laplace", torch.cat([torch.tensor([-12.0, 12.0]), laplace(3000).clamp(-12, 12)])),
    ("laplace-relu", torch.cat([torch.tensor([10.0]), laplace(3000).clamp(0, 10)])),
]:
    o = HistogramObserver(reduce_range=True)
    o(x)
    lo, hi = o._non_linear_param_search()
    s, z = o.calculate_qparams()
    hists.append({"name": name, "x": flat(x), "lo": f9(lo), "hi": f9(hi), "scale": f9(s), "zero": int(z)})

out = {"torch": torch.__version__, "histograms": hists, "engine": torch.backends.quantized.engine, "layers": layers,
       "calib": [{"shape": list(x.shape), "x": flat(x)} for x in calib], "outputs": outputs, "qparams": qparams}
with open(os.path.join(HERE, "static_goldens.json"), "w") as fh:
    json.dump(out, fh, separators=(",", ":"))
    fh.write("\n")
