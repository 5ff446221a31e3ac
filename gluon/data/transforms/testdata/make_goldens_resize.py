#!/usr/bin/python3
"""Goldens for resize_test.go: torch.nn.functional.interpolate (Debian's
python3-torch) on float32 CHW images, bilinear with and without
antialiasing and nearest, shrinking and enlarging; and torchvision's
CenterCrop (python3-torchvision) on odd and even margins and on windows
larger than the image.

Run from the repository root:
    /usr/bin/python3 gluon/data/transforms/testdata/make_goldens_resize.py
It writes gluon/data/transforms/testdata/resize_goldens.json.
"""
import json

import torch
import torch.nn.functional as F
import torchvision.transforms as T

torch.manual_seed(7)
images, cases = [], []
for c, h, w in [(3, 13, 17), (1, 9, 6)]:
    x = torch.rand(c, h, w, dtype=torch.float32)
    images.append({"shape": [c, h, w], "x": x.flatten().tolist()})
    img = len(images) - 1
    for oh, ow in [(5, 7), (4, 3), (20, 23), (13, 11), (1, 1)]:
        for mode, aa in [("bilinear", False), ("bilinear", True), ("nearest", False)]:
            kw = {"mode": mode}
            if mode == "bilinear":
                kw["align_corners"] = False
                kw["antialias"] = aa
            y = F.interpolate(x[None], size=(oh, ow), **kw)[0]
            cases.append({
                "kind": "resize", "mode": mode, "antialias": aa,
                "image": img, "size": [oh, ow], "y": y.flatten().tolist(),
            })
    for oh, ow in [(6, 8), (7, 9), (h, w - 3), (h + 3, w + 2), (2, 2)]:
        y = T.CenterCrop((oh, ow))(x)
        cases.append({
            "kind": "centercrop", "image": img, "size": [oh, ow], "y": y.flatten().tolist(),
        })
# A wide image, where float32 positions would lose precision, shrunk.
x = torch.rand(1, 2, 640, dtype=torch.float32)
images.append({"shape": [1, 2, 640], "x": x.flatten().tolist()})
for mode, aa in [("bilinear", False), ("bilinear", True), ("nearest", False)]:
    kw = {"mode": mode}
    if mode == "bilinear":
        kw["align_corners"] = False
        kw["antialias"] = aa
    y = F.interpolate(x[None], size=(2, 223), **kw)[0]
    cases.append({"kind": "resize", "mode": mode, "antialias": aa,
                  "image": len(images) - 1, "size": [2, 223], "y": y.flatten().tolist()})
with open("gluon/data/transforms/testdata/resize_goldens.json", "w") as f:
    json.dump({"torch": torch.__version__, "images": images, "cases": cases}, f)
print(len(cases), "cases")
