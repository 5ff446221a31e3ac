#!/usr/bin/python3
"""A ResNet-18 for gluon/quantization's TestResNet18VsTorch: the same
random network quantized statically by PyTorch and by Goluon.

torchvision's quantizable ResNet-18 (torchvision.models.quantization,
1000 classes, seeded random weights), made less degenerate than a freshly
initialised one: its BatchNorm statistics re-estimated on the calibration
images (training mode, cumulative average), and its classifier's bias
centred (minus the mean float logits of those images; otherwise one class
wins on every random input). Then PyTorch's eager static quantization of
it: fuse_model (conv+bn+relu), prepare, the two calibration batches,
convert, with the qconfig of golden_static_test.go (MinMaxObserver with
reduce_range, per-channel symmetric weights) and with torch's x86 default
(HistogramObserver with reduce_range), on the default engine (Debian's
torch: onednn).

Written to DIR: resnet18.safetensors (the float state dict, torchvision's
names, for gluon/model/vision.LoadStateDict) and resnet18_io.safetensors:
cal0 and cal1 (8 images each), eval (32 images), and the float, int8
(MinMax) and int8_x86 (histogram) logits on eval. Images are 224×224,
N(0, 1) values. The files are about 47 MB: not committed; run

    d=$(mktemp -d) && /usr/bin/python3 gluon/quantization/testdata/resnet18_vs_torch.py $d &&
    GOLUON_QUANT_TORCH_DIR=$d go test -run ResNet18VsTorch -v ./gluon/quantization/
"""
import copy
import os
import sys
import warnings

import torch
from torch.ao.quantization import (MinMaxObserver, QConfig, convert, default_per_channel_weight_observer,
                                   get_default_qconfig, prepare)
from torchvision.models.quantization import resnet18

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from torch2safetensors import write_safetensors  # noqa: E402

warnings.filterwarnings("ignore")
SIZE = 224


def quantized(m, qconfig, cal):
    q = copy.deepcopy(m)
    q.fuse_model()
    q.qconfig = qconfig
    prepare(q, inplace=True)
    with torch.no_grad():
        for x in cal:
            q(x)
    return convert(q)


def main(out):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    cal = [torch.randn(8, 3, SIZE, SIZE, generator=g) for _ in range(2)]
    ev = torch.randn(32, 3, SIZE, SIZE, generator=g)
    m = resnet18(weights=None, quantize=False)
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.momentum = None
            mod.reset_running_stats()
    m.train()
    with torch.no_grad():
        for x in cal:
            m(x)
    m.eval()
    with torch.no_grad():
        m.fc.bias -= torch.cat([m(x) for x in cal]).mean(0)
        y = m(ev)
    sd = {k: v for k, v in m.state_dict().items() if not k.endswith("num_batches_tracked")}
    write_safetensors(os.path.join(out, "resnet18.safetensors"), sd, {"format": "pt"})
    minmax = QConfig(activation=MinMaxObserver.with_args(reduce_range=True), weight=default_per_channel_weight_observer)
    io = {"cal0": cal[0], "cal1": cal[1], "eval": ev, "float": y}
    for key, qc in [("int8", minmax), ("int8_x86", get_default_qconfig("x86"))]:
        q = quantized(m, qc, cal)
        with torch.no_grad():
            io[key] = q(ev)
        agree = (io[key].argmax(1) == y.argmax(1)).sum().item()
        rms = ((io[key] - y).pow(2).mean() / y.pow(2).mean()).sqrt().item()
        print("%s (%s): top-1 agreement with float %d/32, RMS difference %.3g of RMS logits" %
              (key, torch.backends.quantized.engine, agree, rms))
    write_safetensors(os.path.join(out, "resnet18_io.safetensors"), io)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: resnet18_vs_torch.py DIR")
    main(sys.argv[1])
