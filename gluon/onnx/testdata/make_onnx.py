#!/usr/bin/python3
"""Exports small torchvision models with torch.onnx.export (Debian's
python3-torch 1.13 and python3-torchvision) for gluon/onnx's tests: for each,
NAME.onnx and NAME_io.safetensors (input, output: torchvision's output in
eval mode). The models are the width-reduced configurations of
gluon/model/vision/testdata/make_fixtures.py, with the same seeds, and a
small decoder of nn.Upsample layers (upsample.onnx: Resize nodes as torch
writes them), and a network of the layers mobile and image-to-image models
use (layers.onnx: reflection and replication padding, InstanceNorm2d,
PReLU, Hardswish and Hardsigmoid, LogSoftmax, cumsum), whose io file also
holds the gradients of the output's sum with respect to the PReLU and
InstanceNorm weights, and a recurrent network (recurrent.onnx: a
two-layer bidirectional LSTM, a batch-first GRU and a tanh RNN, as LSTM, GRU
and RNN nodes) with the gradients for its first LSTM layer's weights, and
a network of indexing (indexing.onnx: slice assignment, gather, scatter,
advanced indexing, as ScatterND, GatherElements, ScatterElements and
Gather nodes) with the gradient for its linear layer's weight.

usage: /usr/bin/python3 make_onnx.py OUTDIR
"""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "tools"))
sys.path.insert(0, os.path.join(here, "..", "..", "model", "vision", "testdata"))
from torch2safetensors import write_safetensors  # noqa: E402
import make_fixtures  # noqa: E402

# VGG is left out: torch 1.13 cannot export adaptive_avg_pool2d from a 1×1 to
# a 7×7 plane, which the small VGG needs.
EXPORT = ("resnet18", "mobilenetv2", "vit")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    builders, size = make_fixtures.models(False)
    for i, (name, build) in enumerate(builders.items()):
        if name not in EXPORT:
            continue
        torch.manual_seed(100 + i)
        m = build()
        g = torch.Generator().manual_seed(200 + i)
        make_fixtures.randomise_norms(m, g)
        make_fixtures.randomise_zeros(m, g)
        m.eval()
        s = 64 if name.startswith("resnet") else size
        x = torch.randn(2, 3, s, s, generator=g)
        with torch.no_grad():
            y = m(x)
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(m, x, path, input_names=["input"], output_names=["output"], opset_version=13)
        write_safetensors(os.path.join(out, name + "_io.safetensors"), {"input": x, "output": y})
        print("%s: %s" % (name, path))
    export_upsample(out)
    export_layers(out)
    export_recurrent(out)
    export_indexing(out)
    return 0


def export_upsample(out):
    """A decoder's resizes as torch exports them: nearest x2, bilinear x2,
    bilinear to a size with aligned corners."""
    torch.manual_seed(7)
    m = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Upsample(scale_factor=2, mode="nearest"),
        torch.nn.Conv2d(4, 4, 1),
        torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        torch.nn.Conv2d(4, 2, 3),
        torch.nn.Upsample(size=(20, 18), mode="bilinear", align_corners=True),
    ).eval()
    x = torch.randn(2, 3, 6, 5, generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        y = m(x)
    path = os.path.join(out, "upsample.onnx")
    torch.onnx.export(m, x, path, input_names=["input"], output_names=["output"], opset_version=13)
    write_safetensors(os.path.join(out, "upsample_io.safetensors"), {"input": x, "output": y})
    print("upsample: %s" % path)


class Layers(torch.nn.Module):
    """Padding, instance norm, PReLU, hard activations, a squeeze-excite
    gate, a log-softmax and a running sum."""

    def __init__(self):
        super().__init__()
        self.pad = torch.nn.ReflectionPad2d((1, 2, 1, 0))
        self.conv1 = torch.nn.Conv2d(3, 6, 3)
        self.norm = torch.nn.InstanceNorm2d(6, affine=True)
        self.act = torch.nn.PReLU(6)
        self.rep = torch.nn.ReplicationPad2d(1)
        self.conv2 = torch.nn.Conv2d(6, 6, 3)
        self.gate = torch.nn.Conv2d(6, 6, 1)
        self.fc = torch.nn.Linear(6, 5)

    def forward(self, x):
        x = self.act(self.norm(self.conv1(self.pad(x))))
        x = torch.nn.functional.hardswish(self.conv2(self.rep(x)))
        g = torch.nn.functional.hardsigmoid(self.gate(x.mean((2, 3), keepdim=True)))
        x = (x * g).mean((2, 3))
        return torch.cumsum(torch.log_softmax(self.fc(x), 1), 1)


def export_layers(out):
    torch.manual_seed(11)
    m = Layers().eval()
    with torch.no_grad():
        m.act.weight.uniform_(-0.5, 0.5)
        m.norm.weight.uniform_(0.5, 1.5)
        m.norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, 3, 9, 8, generator=torch.Generator().manual_seed(12))
    y = m(x)
    y.sum().backward()
    path = os.path.join(out, "layers.onnx")
    torch.onnx.export(m, x, path, input_names=["input"], output_names=["output"], opset_version=13,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    write_safetensors(os.path.join(out, "layers_io.safetensors"), {
        "input": x, "output": y.detach(),
        "grad.act.weight": m.act.weight.grad, "grad.norm.weight": m.norm.weight.grad,
        "grad.conv1.weight": m.conv1.weight.grad})
    print("layers: %s" % path)


class Recurrent(torch.nn.Module):
    """An LSTM, a GRU and an RNN in a row, with their final states used."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(5, 6, num_layers=2, bidirectional=True)
        self.gru = torch.nn.GRU(12, 4, batch_first=True)
        self.rnn = torch.nn.RNN(4, 3)
        self.fc = torch.nn.Linear(3 + 4, 2)

    def forward(self, x):
        y, _ = self.lstm(x)                     # [T, N, 12]
        y, h = self.gru(y.transpose(0, 1))      # [N, T, 4], [1, N, 4]
        y, _ = self.rnn(y.transpose(0, 1))      # [T, N, 3]
        return self.fc(torch.cat([y[-1], h[0]], 1))


def export_recurrent(out):
    torch.manual_seed(13)
    m = Recurrent().eval()
    x = torch.randn(7, 3, 5, generator=torch.Generator().manual_seed(14))
    y = m(x)
    y.sum().backward()
    path = os.path.join(out, "recurrent.onnx")
    torch.onnx.export(m, x, path, input_names=["input"], output_names=["output"], opset_version=14,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    write_safetensors(os.path.join(out, "recurrent_io.safetensors"), {
        "input": x, "output": y.detach(),
        "grad.lstm.weight_ih_l0": m.lstm.weight_ih_l0.grad,
        "grad.lstm.weight_hh_l0_reverse": m.lstm.weight_hh_l0_reverse.grad})
    print("recurrent: %s" % path)


class Indexing(torch.nn.Module):
    """Slice assignment, gather, scatter and advanced indexing."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 6)

    def forward(self, x):
        h = self.fc(x)                                    # [N, 6]
        h2 = h.clone()
        h2[:, 1:3] = h[:, 1:3] * 2                        # ScatterND
        idx = torch.tensor([[5, 0, 2], [1, 1, 4]])
        g = torch.gather(h2, 1, idx)                      # GatherElements
        s = torch.zeros_like(h2).scatter(1, idx, g)        # ScatterElements
        rows, cols = torch.tensor([0, 1, 1]), torch.tensor([3, 0, 5])
        picked = h2[rows, cols]                           # advanced indexing
        return s + picked.sum()


def export_indexing(out):
    torch.manual_seed(15)
    m = Indexing().eval()
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(16))
    y = m(x)
    y.sum().backward()
    path = os.path.join(out, "indexing.onnx")
    torch.onnx.export(m, x, path, input_names=["input"], output_names=["output"], opset_version=16,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    write_safetensors(os.path.join(out, "indexing_io.safetensors"), {
        "input": x, "output": y.detach(), "grad.fc.weight": m.fc.weight.grad})
    print("indexing: %s" % path)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
