#!/usr/bin/python3
"""Makes the model zoo's fixtures from torchvision (Debian's
python3-torchvision): for each model, a width-reduced configuration of
torchvision's own architecture with seeded random weights and randomised
BatchNorm running statistics, its state dict (NAME.safetensors, PyTorch's
names) and an input with torchvision's outputs in predict (eval) and
training mode (NAME_io.safetensors: input, eval, train, and train64, the
training-mode output computed in float64). Dropout is 0, so that training
mode is deterministic. The Go tests load both and compare.

usage: /usr/bin/python3 make_fixtures.py OUTDIR [full]

With "full", the models have torchvision's default widths and a 224x224
input (make zoo-full); without, the small configurations that
gluon/model/vision's tests use.
"""
import copy
import os
import sys

import torch
import torch.nn as tnn
from torchvision.models import mobilenetv2, resnet, vgg, vision_transformer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "tools"))
from torch2safetensors import write_safetensors  # noqa: E402


class WideResNet(resnet.ResNet):
    """torchvision's ResNet with the first stage's width w instead of 64:
    its __init__ with 64 replaced, and its own blocks and _make_layer."""

    def __init__(self, block, layers, w, num_classes):
        tnn.Module.__init__(self)
        self._norm_layer = tnn.BatchNorm2d
        self.inplanes, self.dilation, self.groups, self.base_width = w, 1, 1, 64
        self.conv1 = tnn.Conv2d(3, w, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = tnn.BatchNorm2d(w)
        self.relu = tnn.ReLU(inplace=True)
        self.maxpool = tnn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, w, layers[0])
        self.layer2 = self._make_layer(block, 2 * w, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 4 * w, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 8 * w, layers[3], stride=2)
        self.avgpool = tnn.AdaptiveAvgPool2d((1, 1))
        self.fc = tnn.Linear(8 * w * block.expansion, num_classes)


def small_vgg(cfg, bn, w, hidden, classes):
    """torchvision's VGG and make_layers with the channels scaled by w/64
    and the classifier hidden width hidden (module names unchanged)."""
    cfg = [v if v == "M" else v * w // 64 for v in vgg.cfgs[cfg]]
    m = vgg.VGG(vgg.make_layers(cfg, batch_norm=bn), num_classes=classes, dropout=0.0)
    last = cfg[-2]
    m.classifier = tnn.Sequential(
        tnn.Linear(last * 7 * 7, hidden), tnn.ReLU(True), tnn.Dropout(0.0),
        tnn.Linear(hidden, hidden), tnn.ReLU(True), tnn.Dropout(0.0),
        tnn.Linear(hidden, classes))
    return m


def models(full):
    if full:
        return {
            "resnet18": lambda: resnet.resnet18(num_classes=1000),
            "resnet34": lambda: resnet.resnet34(num_classes=1000),
            "resnet50": lambda: resnet.resnet50(num_classes=1000),
            "mobilenetv2": lambda: mobilenetv2.mobilenet_v2(num_classes=1000, dropout=0.0),
            "vgg11": lambda: vgg.vgg11(num_classes=1000, dropout=0.0),
            "vgg11_bn": lambda: vgg.vgg11_bn(num_classes=1000, dropout=0.0),
            "vgg16": lambda: vgg.vgg16(num_classes=1000, dropout=0.0),
            "vgg16_bn": lambda: vgg.vgg16_bn(num_classes=1000, dropout=0.0),
            "vit_b_16": lambda: vision_transformer.vit_b_16(num_classes=1000),
        }, 224
    return {
        "resnet18": lambda: WideResNet(resnet.BasicBlock, [2, 2, 2, 2], 8, 10),
        "resnet34": lambda: WideResNet(resnet.BasicBlock, [3, 4, 6, 3], 4, 10),
        "resnet50": lambda: WideResNet(resnet.Bottleneck, [3, 4, 6, 3], 4, 10),
        "mobilenetv2": lambda: mobilenetv2.MobileNetV2(num_classes=10, width_mult=0.25, dropout=0.0),
        "vgg11": lambda: small_vgg("A", False, 4, 32, 10),
        "vgg11_bn": lambda: small_vgg("A", True, 4, 32, 10),
        "vgg16": lambda: small_vgg("D", False, 4, 32, 10),
        "vgg16_bn": lambda: small_vgg("D", True, 4, 32, 10),
        "vit": lambda: vision_transformer.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32, num_classes=10),
    }, 32


def randomise_zeros(m, g):
    """Parameters that torchvision initialises to zero (ViT's class token
    and head) get random values, so that the comparison sees them."""
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name in ("class_token", "heads.head.weight", "heads.head.bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)


def randomise_norms(m, g):
    """BatchNorm layers get random affine parameters and running
    statistics, so that predict mode is tested with statistics that are
    not the defaults."""
    for mod in m.modules():
        if isinstance(mod, tnn.BatchNorm2d):
            with torch.no_grad():
                mod.weight.copy_(torch.rand(mod.weight.shape, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)
                mod.running_mean.copy_(torch.randn(mod.running_mean.shape, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=g) + 0.5)


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    out, full = argv[1], len(argv) == 3 and argv[2] == "full"
    os.makedirs(out, exist_ok=True)
    builders, size = models(full)
    for i, (name, build) in enumerate(builders.items()):
        torch.manual_seed(100 + i)
        m = build()
        g = torch.Generator().manual_seed(200 + i)
        randomise_norms(m, g)
        randomise_zeros(m, g)
        # The ResNets at 64x64: at 32x32 their last stage normalises 2
        # values per channel in training mode (batch 2, 1x1 planes), which
        # amplifies float32 rounding: there, torch's own float32 output
        # differs from its float64 one by 1.3e-5 (ResNet-34) and 1.1e-4
        # (ResNet-50) relative, and Goluon's float32 by 1.1e-4 and 1.9e-3,
        # while in float64 (ResNet-50) Goluon and torch agree to 1e-11.
        s = 64 if name.startswith("resnet") and not full else size
        x = torch.randn(2, 3, s, s, generator=g)
        write_safetensors(os.path.join(out, name + ".safetensors"), m.state_dict(), {"format": "pt"})
        m.eval()
        with torch.no_grad():
            y_eval = m(x)
        m.train()
        with torch.no_grad():
            y_train = m(x)
        io = {"input": x, "eval": y_eval, "train": y_train}
        if not full:
            # Training mode normalises with the batch's statistics, which
            # amplifies float32 rounding; the float64 output tells the
            # tests how much (see TestMatchesTorchvision).
            m64 = copy.deepcopy(m).double()
            with torch.no_grad():
                io["train64"] = m64(x.double())
        write_safetensors(os.path.join(out, name + "_io.safetensors"), io)
        print("%s: %d parameters, output %s" % (name, sum(p.numel() for p in m.parameters()), tuple(y_eval.shape)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
