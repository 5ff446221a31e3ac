#!/usr/bin/python3
"""Exports small torchvision models with torch.onnx.export (Debian's
python3-torch 1.13 and python3-torchvision) for gluon/onnx's tests: for each,
NAME.onnx and NAME_io.safetensors (input, output: torchvision's output in
eval mode). The models are the width-reduced configurations of
gluon/model/vision/testdata/make_fixtures.py, with the same seeds, and a
small decoder of nn.Upsample layers (upsample.onnx: Resize nodes as torch
writes them).

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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
