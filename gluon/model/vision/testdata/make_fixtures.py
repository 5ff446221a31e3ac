#!/usr/bin/python3
"""Makes the model zoo's fixtures from torchvision (Debian's
python3-torchvision): for each model, a width-reduced configuration of
torchvision's own architecture with seeded random weights and randomised
BatchNorm running statistics, its state dict (NAME.safetensors, PyTorch's
names) and an input with torchvision's outputs in predict (eval) and
training mode (NAME_io.safetensors: input, eval, train, and train64, the
training-mode output computed in float64; for GoogLeNet and Inception v3
also their auxiliary classifiers' training-mode outputs, train_aux1 and
train_aux2, or train_aux). Dropout is 0, so that training mode is
deterministic. The Go tests load both and compare.

usage: /usr/bin/python3 make_fixtures.py OUTDIR [full] [NAME...]

With "full", the models have torchvision's default widths and a 224x224
input (make zoo-full; EfficientNet-B1 to B7 and V2 too, although
torchvision evaluates them at 240 to 600; Inception v3 at 299x299);
without, the small configurations that gluon/model/vision's tests use.
NAMEs limit the fixtures to those models (each keeps its seeds). Dropout
and, in the small configurations, stochastic depth are 0; ConvNeXt's
layer scales and LayerNorms and Swin's LayerNorms, linear biases and
relative position bias tables get random values.
"""
import copy
import functools
import importlib
import os
import sys

import torch
import torch.nn as tnn
from torchvision.models import (convnext, densenet, efficientnet, inception, mnasnet, mobilenetv2, mobilenetv3, regnet,
                                resnet, shufflenetv2, squeezenet, swin_transformer, vgg, vision_transformer)
from torchvision.models.alexnet import AlexNet, alexnet

# torchvision.models.googlenet is the builder function, which hides the
# module of that name.
googlenet = importlib.import_module("torchvision.models.googlenet")

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


def small_swin(w, heads, window):
    """torchvision's SwinTransformer (Swin-T's depths) with the embedding
    width w, the stages' heads and square windows of side window, no
    stochastic depth."""
    return swin_transformer.SwinTransformer(patch_size=[4, 4], embed_dim=w, depths=[2, 2, 6, 2], num_heads=heads,
                                            window_size=[window, window], stochastic_depth_prob=0.0, num_classes=10)


def small_regnet(stem, **init_params):
    """torchvision's RegNet from BlockParams.from_init_params(**init_params)
    with a stem of width stem (torchvision's builders' BatchNorm)."""
    params = regnet.BlockParams.from_init_params(**init_params)
    return regnet.RegNet(params, num_classes=10, stem_width=stem,
                         norm_layer=functools.partial(tnn.BatchNorm2d, eps=1e-05, momentum=0.1))


def small_efficientnet_v2(arch, width):
    """torchvision's EfficientNetV2 arch with the channels (and the last
    convolution's 1280) scaled by width/64 as _make_divisible(c·width/64,
    8) (Goluon's Options.Width), no dropout and no stochastic depth."""
    setting, last = efficientnet._efficientnet_conf(arch)
    adjust = lambda c: efficientnet._make_divisible(c * width / 64, 8)  # noqa: E731
    for cnf in setting:
        cnf.input_channels, cnf.out_channels = adjust(cnf.input_channels), adjust(cnf.out_channels)
    return efficientnet.EfficientNet(setting, 0.0, stochastic_depth_prob=0.0, num_classes=10, last_channel=adjust(last),
                                     norm_layer=functools.partial(tnn.BatchNorm2d, eps=1e-03))


def scale_inception(m, w, basic, aux_fc):
    """Scales the channels of torchvision's GoogLeNet or Inception3 m by
    w/64 (module names unchanged): every BasicConv2d (class basic) but the
    first one's input, the classifier's input and, through aux_fc, the
    auxiliary classifiers' linear layers."""
    s = lambda c: c * w // 64  # noqa: E731
    for mod in list(m.modules()):
        if isinstance(mod, basic):
            c = mod.conv
            cin = c.in_channels if c.in_channels == 3 else s(c.in_channels)
            mod.conv = tnn.Conv2d(cin, s(c.out_channels), c.kernel_size, c.stride, c.padding, bias=False)
            mod.bn = tnn.BatchNorm2d(s(c.out_channels), eps=0.001)
    m.fc = tnn.Linear(s(m.fc.in_features), m.fc.out_features)
    aux_fc(m, s)
    return m


def small_googlenet(w):
    """torchvision's GoogLeNet, channels scaled by w/64, with its
    auxiliary classifiers and the input transform of its pretrained
    weights, no dropout."""
    m = googlenet.GoogLeNet(num_classes=10, aux_logits=True, transform_input=True, init_weights=True, dropout=0.0,
                            dropout_aux=0.0)

    def aux_fc(m, s):
        for aux in (m.aux1, m.aux2):
            aux.fc1 = tnn.Linear(s(128) * 16, s(1024))
            aux.fc2 = tnn.Linear(s(1024), 10)
    return scale_inception(m, w, googlenet.BasicConv2d, aux_fc)


def small_inception_v3(w):
    """torchvision's Inception3, channels scaled by w/64, with its
    auxiliary classifier and the input transform of its pretrained
    weights, no dropout."""
    m = inception.Inception3(num_classes=10, aux_logits=True, transform_input=True, init_weights=False, dropout=0.0)

    def aux_fc(m, s):
        m.AuxLogits.fc = tnn.Linear(s(768), 10)
    return scale_inception(m, w, inception.BasicConv2d, aux_fc)


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
            "swin_t": lambda: swin_transformer.swin_t(num_classes=1000),
            "swin_s": lambda: swin_transformer.swin_s(num_classes=1000),
            "swin_b": lambda: swin_transformer.swin_b(num_classes=1000),
            **{name: functools.partial(getattr(regnet, name), num_classes=1000) for name in REGNETS},
            "shufflenet_v2_x0_5": lambda: shufflenetv2.shufflenet_v2_x0_5(num_classes=1000),
            "shufflenet_v2_x1_0": lambda: shufflenetv2.shufflenet_v2_x1_0(num_classes=1000),
            "shufflenet_v2_x1_5": lambda: shufflenetv2.shufflenet_v2_x1_5(num_classes=1000),
            "shufflenet_v2_x2_0": lambda: shufflenetv2.shufflenet_v2_x2_0(num_classes=1000),
            "mnasnet0_5": lambda: mnasnet.mnasnet0_5(num_classes=1000, dropout=0.0),
            "mnasnet0_75": lambda: mnasnet.mnasnet0_75(num_classes=1000, dropout=0.0),
            "mnasnet1_0": lambda: mnasnet.mnasnet1_0(num_classes=1000, dropout=0.0),
            "mnasnet1_3": lambda: mnasnet.mnasnet1_3(num_classes=1000, dropout=0.0),
            # googlenet and inception_v3 as their pretrained weights build
            # them: the input transform on; GoogLeNet without its
            # auxiliary classifiers, Inception v3 with its own.
            "googlenet": lambda: googlenet.GoogLeNet(num_classes=1000, aux_logits=False, transform_input=True,
                                                     init_weights=True, dropout=0.0),
            "inception_v3": lambda: inception.Inception3(num_classes=1000, aux_logits=True, transform_input=True,
                                                         init_weights=False, dropout=0.0),
            **{"efficientnet_v2_%s" % v: functools.partial(without_dropout, getattr(efficientnet, "efficientnet_v2_%s" % v))
               for v in "sml"},
            "vgg13": lambda: vgg.vgg13(num_classes=1000, dropout=0.0),
            "vgg13_bn": lambda: vgg.vgg13_bn(num_classes=1000, dropout=0.0),
            "vgg19": lambda: vgg.vgg19(num_classes=1000, dropout=0.0),
            "vgg19_bn": lambda: vgg.vgg19_bn(num_classes=1000, dropout=0.0),
            "vit_b_32": lambda: vision_transformer.vit_b_32(num_classes=1000),
            "vit_l_16": lambda: vision_transformer.vit_l_16(num_classes=1000),
            "vit_l_32": lambda: vision_transformer.vit_l_32(num_classes=1000),
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
        "swin_t": lambda: small_swin(8, [1, 2, 4, 8], 4),
        "regnet_y_400mf": lambda: small_regnet(8, depth=6, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25),
        "regnet_x_400mf": lambda: small_regnet(8, depth=7, w_0=8, w_a=8.0, w_m=2.0, group_width=4),
        "shufflenet_v2_x1_0": lambda: shufflenetv2.ShuffleNetV2([4, 8, 4], [8, 16, 32, 64, 128], num_classes=10),
        "mnasnet1_0": lambda: mnasnet.MNASNet(0.125, num_classes=10, dropout=0.0),
        "googlenet": lambda: small_googlenet(8),
        "inception_v3": lambda: small_inception_v3(4),
        "efficientnet_v2_s": lambda: small_efficientnet_v2("efficientnet_v2_s", 4),
        "vgg13_bn": lambda: small_vgg("B", True, 4, 32, 10),
        "vgg19": lambda: small_vgg("E", False, 4, 32, 10),
    }, 32


# The small models whose input is 64x64 rather than 32x32 (see main), and
# AlexNet's, which at 95x95 pools a 5x5 map to 6x6 adaptively; Swin's 48x48
# pads and shifts its windows and pads a patch merging; GoogLeNet's 80x80
# pools in ceil mode with partial windows and pools the auxiliary
# classifiers' 5x5 maps to 4x4 adaptively; Inception v3's auxiliary
# classifier needs 299x299 (as at full size, its smallest input in
# training mode).
SMALL_SIZES = {"resnet18": 64, "resnet34": 64, "resnet50": 64, "resnet101": 64, "resnet152": 64,
               "resnext50_32x4d": 64, "resnext101_32x8d": 64, "wide_resnet50_2": 64, "wide_resnet101_2": 64,
               "densenet121": 64, "squeezenet1_0": 64, "squeezenet1_1": 64, "alexnet": 95,
               "swin_t": 48, "regnet_y_400mf": 64, "regnet_x_400mf": 64, "shufflenet_v2_x1_0": 64, "mnasnet1_0": 64,
               "googlenet": 80, "inception_v3": 299, "efficientnet_v2_s": 64}

# The full-size models whose input is not 224x224: Inception v3's
# auxiliary classifier (training mode) needs 299x299.
FULL_SIZES = {"inception_v3": 299}

# torchvision's RegNets (regnet_y_128gf, 645 million parameters, is
# checked by its parameter count only).
REGNETS = ["regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf", "regnet_y_16gf",
           "regnet_y_32gf", "regnet_x_400mf", "regnet_x_800mf", "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf",
           "regnet_x_16gf", "regnet_x_32gf"]


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


def randomise_swin(m, g):
    """A SwinTransformer's LayerNorms, linear biases (zero or 1e-6) and
    relative position bias tables (standard deviation 0.02) get random
    values."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, tnn.LayerNorm):
                mod.weight.copy_(torch.rand(mod.weight.shape, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)
            elif isinstance(mod, tnn.Linear) and mod.bias is not None:
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)
            elif isinstance(mod, swin_transformer.ShiftedWindowAttention):
                t = mod.relative_position_bias_table
                t.copy_(torch.randn(t.shape, generator=g))


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
        if isinstance(m, swin_transformer.SwinTransformer):
            randomise_swin(m, g)
        # The ResNets at 64x64: at 32x32 their last stage normalises 2
        # values per channel in training mode (batch 2, 1x1 planes), which
        # amplifies float32 rounding: there, torch's own float32 output
        # differs from its float64 one by 1.3e-5 (ResNet-34) and 1.1e-4
        # (ResNet-50) relative, and Goluon's float32 by 1.1e-4 and 1.9e-3,
        # while in float64 (ResNet-50) Goluon and torch agree to 1e-11.
        s = FULL_SIZES.get(name, size) if full else SMALL_SIZES.get(name, size)
        x = torch.randn(2, 3, s, s, generator=g)
        write_safetensors(os.path.join(out, name + ".safetensors"), m.state_dict(), {"format": "pt"})
        m.eval()
        with torch.no_grad():
            y_eval = m(x)
        m.train()
        with torch.no_grad():
            y_train = m(x)
        io = {"input": x, "eval": y_eval}
        if isinstance(y_train, googlenet.GoogLeNetOutputs):
            # The auxiliary classifiers' outputs too: aux1's, then aux2's
            # (GoogLeNetOutputs names them aux_logits2 and aux_logits1).
            y_train, io["train_aux1"], io["train_aux2"] = y_train
        elif isinstance(y_train, inception.InceptionOutputs):
            y_train, io["train_aux"] = y_train
        io["train"] = y_train
        if not full:
            # Training mode normalises with the batch's statistics, which
            # amplifies float32 rounding; the float64 output tells the
            # tests how much (see TestMatchesTorchvision).
            m64 = copy.deepcopy(m).double()
            with torch.no_grad():
                y64 = m64(x.double())
            io["train64"] = y64[0] if isinstance(y64, tuple) else y64
        write_safetensors(os.path.join(out, name + "_io.safetensors"), io)
        print("%s: %d parameters, output %s" % (name, sum(p.numel() for p in m.parameters()), tuple(y_eval.shape)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
