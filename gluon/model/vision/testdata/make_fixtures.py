#!/usr/bin/python3
"""Makes the model zoo's fixtures from torchvision (Debian's
python3-torchvision): for each model, a width-reduced configuration of
torchvision's own architecture with seeded random weights and randomised
BatchNorm running statistics, its state dict (NAME.safetensors, PyTorch's
names) and an input with torchvision's outputs in predict (eval) and
training mode (NAME_io.safetensors: input, eval, train, and train64, the
training-mode output computed in float64). Dropout is 0, so that training
mode is deterministic. The Go tests load both and compare.

usage: /usr/bin/python3 make_fixtures.py OUTDIR [full] [NAME...]

With "full", the models have torchvision's default widths and a 224x224
input (make zoo-full; EfficientNet-B1 to B7 too, although torchvision
evaluates them at 240 to 600); without, the small configurations that
gluon/model/vision's tests use. NAMEs limit the fixtures to those models
(each keeps its seeds). Dropout and, in the small configurations,
stochastic depth are 0, and ConvNeXt's layer scales and LayerNorms get
random values.
"""
import copy
import functools
import os
import sys

import torch
import torch.nn as tnn
from torchvision.models import (convnext, densenet, efficientnet, mobilenetv2, mobilenetv3, resnet, squeezenet, vgg,
                                vision_transformer)
from torchvision.models.alexnet import AlexNet, alexnet

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "tools"))
from torch2safetensors import write_safetensors  # noqa: E402


class WideResNet(resnet.ResNet):
    """torchvision's ResNet with the first stage's width w instead of 64:
    its __init__ with 64 replaced, and its own blocks and _make_layer
    (groups and width_per_group as torchvision's, for ResNeXt and Wide
    ResNet)."""

    def __init__(self, block, layers, w, num_classes, groups=1, width_per_group=64):
        tnn.Module.__init__(self)
        self._norm_layer = tnn.BatchNorm2d
        self.inplanes, self.dilation, self.groups, self.base_width = w, 1, groups, width_per_group
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


def small_mobilenet_v3(arch, width):
    """torchvision's MobileNetV3 with the width multiplier width/64."""
    setting, last = mobilenetv3._mobilenet_v3_conf(arch, width_mult=width / 64)
    return mobilenetv3.MobileNetV3(setting, last, num_classes=10, dropout=0.0)


def small_efficientnet(arch, width_mult, depth_mult, width):
    """torchvision's EfficientNet variant arch with its width multiplier
    scaled by width/64 (Goluon's Options.Width), no dropout and no
    stochastic depth (so that training mode is deterministic)."""
    setting, last = efficientnet._efficientnet_conf(arch, width_mult=width_mult * width / 64, depth_mult=depth_mult)
    return efficientnet.EfficientNet(setting, 0.0, stochastic_depth_prob=0.0, num_classes=10, last_channel=last)


def small_convnext(w, layers):
    """torchvision's ConvNeXt with the first stage's width w, no
    stochastic depth."""
    cfg = [convnext.CNBlockConfig(w << i, (w << (i + 1)) if i < 3 else None, n) for i, n in enumerate(layers)]
    return convnext.ConvNeXt(cfg, stochastic_depth_prob=0.0, num_classes=10)


def small_alexnet(w, hidden):
    """torchvision's AlexNet with the channels scaled by w/64 and the
    classifier hidden width hidden (module names unchanged)."""
    m = AlexNet(num_classes=10, dropout=0.0)
    c = [v * w // 64 for v in (64, 192, 384, 256)]
    for i, (cin, cout) in {0: (3, c[0]), 3: (c[0], c[1]), 6: (c[1], c[2]), 8: (c[2], c[3]), 10: (c[3], c[3])}.items():
        old = m.features[i]
        m.features[i] = tnn.Conv2d(cin, cout, old.kernel_size, old.stride, old.padding)
    m.classifier[1] = tnn.Linear(c[3] * 6 * 6, hidden)
    m.classifier[4] = tnn.Linear(hidden, hidden)
    m.classifier[6] = tnn.Linear(hidden, 10)
    return m


def small_squeezenet(version, w):
    """torchvision's SqueezeNet with the channels scaled by w/64 (module
    names unchanged)."""
    m = squeezenet.SqueezeNet(version, num_classes=10, dropout=0.0)
    ch = lambda c: c * w // 64  # noqa: E731
    cin = 3
    for i, mod in enumerate(m.features):
        if isinstance(mod, tnn.Conv2d):
            m.features[i] = tnn.Conv2d(cin, ch(mod.out_channels), mod.kernel_size, mod.stride)
            cin = ch(mod.out_channels)
        elif isinstance(mod, squeezenet.Fire):
            m.features[i] = squeezenet.Fire(cin, ch(mod.squeeze.out_channels), ch(mod.expand1x1.out_channels),
                                            ch(mod.expand3x3.out_channels))
            cin = 2 * ch(mod.expand1x1.out_channels)
    m.classifier[1] = tnn.Conv2d(cin, 10, kernel_size=1)
    return m


def without_dropout(build):
    """build(num_classes=1000) with its dropout rates set to 0
    (torchvision's efficientnet_bN take no dropout argument)."""
    m = build(num_classes=1000)
    for mod in m.modules():
        if isinstance(mod, tnn.Dropout):
            mod.p = 0.0
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
            "resnet101": lambda: resnet.resnet101(num_classes=1000),
            "resnet152": lambda: resnet.resnet152(num_classes=1000),
            "resnext50_32x4d": lambda: resnet.resnext50_32x4d(num_classes=1000),
            "resnext101_32x8d": lambda: resnet.resnext101_32x8d(num_classes=1000),
            "resnext101_64x4d": lambda: resnet.resnext101_64x4d(num_classes=1000),
            "wide_resnet50_2": lambda: resnet.wide_resnet50_2(num_classes=1000),
            "wide_resnet101_2": lambda: resnet.wide_resnet101_2(num_classes=1000),
            "mobilenet_v3_large": lambda: mobilenetv3.mobilenet_v3_large(num_classes=1000, dropout=0.0),
            "mobilenet_v3_small": lambda: mobilenetv3.mobilenet_v3_small(num_classes=1000, dropout=0.0),
            "densenet121": lambda: densenet.densenet121(num_classes=1000),
            "densenet161": lambda: densenet.densenet161(num_classes=1000),
            "densenet169": lambda: densenet.densenet169(num_classes=1000),
            "densenet201": lambda: densenet.densenet201(num_classes=1000),
            **{"efficientnet_b%d" % i: functools.partial(without_dropout, getattr(efficientnet, "efficientnet_b%d" % i))
               for i in range(8)},
            "convnext_tiny": lambda: convnext.convnext_tiny(num_classes=1000),
            "convnext_small": lambda: convnext.convnext_small(num_classes=1000),
            "convnext_base": lambda: convnext.convnext_base(num_classes=1000),
            "convnext_large": lambda: convnext.convnext_large(num_classes=1000),
            "alexnet": lambda: alexnet(num_classes=1000, dropout=0.0),
            "squeezenet1_0": lambda: squeezenet.squeezenet1_0(num_classes=1000, dropout=0.0),
            "squeezenet1_1": lambda: squeezenet.squeezenet1_1(num_classes=1000, dropout=0.0),
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
        "resnet101": lambda: WideResNet(resnet.Bottleneck, [3, 4, 23, 3], 2, 10),
        "resnet152": lambda: WideResNet(resnet.Bottleneck, [3, 8, 36, 3], 2, 10),
        "resnext50_32x4d": lambda: WideResNet(resnet.Bottleneck, [3, 4, 6, 3], 4, 10, groups=4, width_per_group=16),
        "resnext101_32x8d": lambda: WideResNet(resnet.Bottleneck, [3, 4, 23, 3], 2, 10, groups=4, width_per_group=32),
        "wide_resnet50_2": lambda: WideResNet(resnet.Bottleneck, [3, 4, 6, 3], 2, 10, width_per_group=128),
        "wide_resnet101_2": lambda: WideResNet(resnet.Bottleneck, [3, 4, 23, 3], 1, 10, width_per_group=128),
        "mobilenet_v3_large": lambda: small_mobilenet_v3("mobilenet_v3_large", 8),
        "mobilenet_v3_small": lambda: small_mobilenet_v3("mobilenet_v3_small", 8),
        "densenet121": lambda: densenet.DenseNet(3, (6, 12, 24, 16), 6, num_classes=10),
        "efficientnet_b0": lambda: small_efficientnet("efficientnet_b0", 1.0, 1.0, 8),
        "convnext_tiny": lambda: small_convnext(4, [3, 3, 9, 3]),
        "alexnet": lambda: small_alexnet(4, 32),
        "squeezenet1_0": lambda: small_squeezenet("1_0", 16),
        "squeezenet1_1": lambda: small_squeezenet("1_1", 16),
    }, 32


# The small models whose input is 64x64 rather than 32x32 (see main), and
# AlexNet's, which at 95x95 pools a 5x5 map to 6x6 adaptively.
SMALL_SIZES = {"resnet18": 64, "resnet34": 64, "resnet50": 64, "resnet101": 64, "resnet152": 64,
               "resnext50_32x4d": 64, "resnext101_32x8d": 64, "wide_resnet50_2": 64, "wide_resnet101_2": 64,
               "densenet121": 64, "squeezenet1_0": 64, "squeezenet1_1": 64, "alexnet": 95}


def randomise_zeros(m, g):
    """Parameters that torchvision initialises to zero (ViT's class token
    and head) get random values, so that the comparison sees them."""
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name in ("class_token", "heads.head.weight", "heads.head.bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)


def randomise_convnext(m, g):
    """A ConvNeXt's layer scales (1e-6, which hides the blocks) and
    LayerNorms get random values."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, convnext.CNBlock):
                mod.layer_scale.copy_(torch.rand(mod.layer_scale.shape, generator=g) + 0.5)
            elif isinstance(mod, tnn.LayerNorm):
                mod.weight.copy_(torch.rand(mod.weight.shape, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)


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
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    out, names = argv[1], argv[2:]
    full = names[:1] == ["full"]
    if full:
        names = names[1:]
    builders, size = models(full)
    unknown = set(names) - set(builders)
    if unknown:
        sys.stderr.write("unknown models: %s\n" % " ".join(sorted(unknown)))
        return 2
    os.makedirs(out, exist_ok=True)
    for i, (name, build) in enumerate(builders.items()):
        if names and name not in names:
            continue  # the seeds stay those of the model's place in the list
        torch.manual_seed(100 + i)
        m = build()
        g = torch.Generator().manual_seed(200 + i)
        randomise_norms(m, g)
        randomise_zeros(m, g)
        if isinstance(m, convnext.ConvNeXt):
            randomise_convnext(m, g)
        # The ResNets at 64x64: at 32x32 their last stage normalises 2
        # values per channel in training mode (batch 2, 1x1 planes), which
        # amplifies float32 rounding: there, torch's own float32 output
        # differs from its float64 one by 1.3e-5 (ResNet-34) and 1.1e-4
        # (ResNet-50) relative, and Goluon's float32 by 1.1e-4 and 1.9e-3,
        # while in float64 (ResNet-50) Goluon and torch agree to 1e-11.
        s = size if full else SMALL_SIZES.get(name, size)
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
