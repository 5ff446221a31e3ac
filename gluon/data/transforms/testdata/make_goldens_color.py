#!/usr/bin/python3
"""Goldens for the colour, grayscale, rotation, affine, blur, erasing and
linear-transformation tests (color_golden_test.go): torchvision 0.14's
functional ops on tensors (Debian's python3-torchvision and python3-torch),
applied with fixed parameters, so no random generator is involved, to small
seeded uint8 and float32 CHW images.

Run from the repository root:
    /usr/bin/python3 gluon/data/transforms/testdata/make_goldens_color.py
It writes gluon/data/transforms/testdata/color_goldens.json.
"""
import json

import torch
import torchvision
import torchvision.transforms.functional as F
from torchvision.transforms import InterpolationMode

torch.manual_seed(11)
images, cases = [], []


def special(x, top):
    """Overwrites the first pixels of a 3-channel image with colours that take
    every branch of the RGB to HSV conversion: grays, primaries, ties
    between the largest channels, black and white."""
    if x.shape[0] != 3:
        return x
    px = [(0, 0, 0), (1, 1, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0),
          (0, 1, 1), (1, 0, 1), (0.5, 0.5, 0.5), (0.2, 0.6, 0.6), (0.7, 0.7, 0.1)]
    w = x.shape[2]
    for k, p in enumerate(px):
        for c in range(3):
            x[c, k // w, k % w] = round(p[c] * top) if top == 255 else p[c]
    return x


def values(t):
    """The values of t as a list: integers, or floats that JSON writes in
    the shortest form that reads back as the same float32."""
    if t.is_floating_point():
        return [float(str(v)) for v in t.flatten().numpy()]
    return t.flatten().tolist()


def add_image(x):
    images.append({"dtype": str(x.dtype).replace("torch.", ""), "shape": list(x.shape),
                   "x": values(x)})
    return len(images) - 1


def add(op, img, y, **params):
    cases.append(dict(op=op, image=img, shape=list(y.shape), y=values(y), **params))


imgs = {}
for c, h, w in [(3, 7, 9), (1, 5, 6), (3, 13, 17)]:
    u = special(torch.randint(0, 256, (c, h, w), dtype=torch.uint8), 255)
    imgs[("uint8", c, h, w)] = (add_image(u), u)
    f = special(torch.rand(c, h, w, dtype=torch.float32), 1.0)
    imgs[("float32", c, h, w)] = (add_image(f), f)

# The 13x17 images are only rotated and blurred: their 221-point sampling
# grid goes through BLAS in torch's bmm, while grids of fewer than 67 points
# (the 7x9 and 5x6 images) go through torch's own kernel, which rounds
# differently.
colour = [k for k in imgs if k[2:] != (13, 17)]
for key in colour:
    i, x = imgs[key]
    for b in [0.0, 0.5, 1.0, 1.37, 2.5]:
        add("brightness", i, F.adjust_brightness(x, b), factor=b)
    for c in [0.0, 0.4, 1.0, 1.8]:
        add("contrast", i, F.adjust_contrast(x, c), factor=c)
    for s in [0.0, 0.3, 1.0, 2.2]:
        add("saturation", i, F.adjust_saturation(x, s), factor=s)
    for h in [-0.5, -0.23, 0.0, 0.1, 0.37, 0.5]:
        add("hue", i, F.adjust_hue(x, h), factor=h)
    if x.shape[0] == 3:
        for n in [1, 3]:
            add("grayscale", i, F.rgb_to_grayscale(x, n), channels=n)

for key in imgs:
    i, x = imgs[key]
    # Blur: odd kernels (x size, y size) whose halves fit the image.
    h, w = x.shape[1:]
    for k, s in [((3, 3), (1.0, 1.0)), ((5, 3), (0.7, 1.9)), ((1, 5), (2.0, 0.4)), ((7, 9), (3.0, 1.5))]:
        if k[0] // 2 < w and k[1] // 2 < h:
            add("blur", i, F.gaussian_blur(x, list(k), list(s)), kernel=list(k), sigma=list(s))

interps = {"nearest": InterpolationMode.NEAREST, "bilinear": InterpolationMode.BILINEAR}
rotations = [
    dict(angle=30.0), dict(angle=-17.5), dict(angle=90.0), dict(angle=45.0),
    dict(angle=123.4, center=[2, 3]), dict(angle=-61.0, center=[2.5, 1.5]),
    dict(angle=30.0, expand=True), dict(angle=-100.0, expand=True), dict(angle=90.0, expand=True),
    dict(angle=33.0, fill=[0.0]), dict(angle=-20.0, fill=[0.25]), dict(angle=75.0, expand=True, fill=[0.0]),
]
for key in imgs:
    i, x = imgs[key]
    for r in rotations:
        for name, mode in interps.items():
            fill = r.get("fill")
            if fill is not None and key[0] == "uint8":
                fill = [v * 255 for v in fill]
            if fill is not None and len(fill) == 1 and x.shape[0] == 3 and r["angle"] > 0:
                fill = [fill[0], fill[0] / 2, 0.75 if key[0] == "float32" else 190.0]
            y = F.rotate(x, r["angle"], mode, r.get("expand", False), r.get("center"), fill)
            add("rotate", i, y, angle=r["angle"], interp=name, expand=r.get("expand", False),
                center=r.get("center"), fill=fill)

affines = [
    dict(angle=20.0, translate=[1, -2], scale=1.0, shear=[0.0, 0.0]),
    dict(angle=-35.0, translate=[0, 0], scale=0.8, shear=[10.0, 0.0]),
    dict(angle=0.0, translate=[2, 1], scale=1.3, shear=[-15.0, 7.0], center=[3, 2]),
    dict(angle=140.0, translate=[-1, 0], scale=1.1, shear=[5.0, -5.0], fill=[0.0]),
]
for key in [("uint8", 3, 7, 9), ("float32", 3, 13, 17), ("float32", 1, 5, 6)]:
    i, x = imgs[key]
    for a in affines:
        for name, mode in interps.items():
            fill = a.get("fill")
            y = F.affine(x, a["angle"], a["translate"], a["scale"], a["shear"], mode, fill, a.get("center"))
            add("affine", i, y, angle=a["angle"], translate=a["translate"], scale=a["scale"],
                shear=a["shear"], interp=name, center=a.get("center"), fill=fill)

for key in [("float32", 3, 7, 9), ("float32", 1, 5, 6)]:
    i, x = imgs[key]
    c = x.shape[0]
    for top, left, h, w, v in [(1, 2, 3, 4, [0.0]), (0, 0, 2, 2, [0.5]), (2, 3, 3, 3, [0.1, 0.2, 0.3][:c] if c == 3 else [-1.5])]:
        y = F.erase(x, top, left, h, w, torch.tensor(v)[:, None, None])
        add("erase", i, y, top=top, left=left, h=h, w=w, value=v)

# LinearTransformation (ZCA whitening style) on a 3x4x5 image.
lin = torch.rand(3, 4, 5, dtype=torch.float32)
li = add_image(lin)
n = lin.numel()
m = torch.randn(n, n, dtype=torch.float32) / n ** 0.5
mean = torch.rand(n, dtype=torch.float32)
y = torchvision.transforms.LinearTransformation(m, mean)(lin)
add("linear", li, y, matrix=values(m), mean=values(mean))

with open("gluon/data/transforms/testdata/color_goldens.json", "w") as f:
    json.dump({"torch": torch.__version__, "torchvision": torchvision.__version__,
               "images": images, "cases": cases}, f)
print(len(images), "images,", len(cases), "cases")
