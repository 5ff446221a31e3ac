#!/usr/bin/python3
"""Goldens for boxes_test.go: torchvision.ops' box_area, box_iou,
box_convert, nms and batched_nms (Debian's python3-torchvision) in
float64, with the gradients of sum(y * head) for the differentiable ones.

Run from the repository root:
    /usr/bin/python3 gluon/model/vision/testdata/make_goldens_boxes.py
It writes gluon/model/vision/testdata/goldens_boxes.json.
"""
import json

import torch
import torchvision.ops as ops

torch.manual_seed(47)
torch.set_default_dtype(torch.float64)


def enc(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


def boxes(n, scale=10.0):
    xy = torch.rand(n, 2) * scale
    wh = torch.rand(n, 2) * scale / 2 + 0.1
    return torch.cat([xy, xy + wh], 1)


def ramp(t):
    k = t.numel()
    return (torch.linspace(-1, 1, k) if k > 1 else torch.ones(k)).reshape(t.shape)


cases = []
a, b = boxes(5), boxes(4)
ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
iou = ops.box_iou(ag, bg)
ga, gb = torch.autograd.grad((iou * ramp(iou)).sum(), [ag, bg])
cases.append({"op": "iou", "a": enc(a), "b": enc(b), "y": enc(iou), "ga": enc(ga), "gb": enc(gb)})
cases.append({"op": "area", "a": enc(a), "y": enc(ops.box_area(a))})
for f, t in [("xyxy", "cxcywh"), ("xyxy", "xywh"), ("cxcywh", "xywh"), ("xywh", "xyxy"), ("cxcywh", "xyxy")]:
    cases.append({"op": "convert", "from": f, "to": t, "a": enc(a), "y": enc(ops.box_convert(a, f, t))})
for n, thr in [(30, 0.5), (30, 0.2), (12, 0.7), (1, 0.5)]:
    bx, sc = boxes(n), torch.rand(n)
    cases.append({"op": "nms", "thr": thr, "a": enc(bx), "scores": enc(sc), "y": enc(ops.nms(bx, sc, thr).double())})
    cls = torch.randint(0, 3, (n,))
    cases.append({"op": "batched_nms", "thr": thr, "a": enc(bx), "scores": enc(sc), "idxs": enc(cls.double()),
                  "y": enc(ops.batched_nms(bx, sc, cls, thr).double())})

# RoIAlign: boxes inside, across and outside the map, in two images.
fmap = torch.randn(2, 3, 9, 11)
rois = torch.tensor([[0, 1.0, 1.0, 6.0, 5.0], [1, 0.0, 0.0, 10.5, 8.5], [0, -3.0, 2.0, 4.0, 12.0],
                     [1, 7.2, 3.3, 7.9, 4.1], [0, 20.0, 20.0, 25.0, 25.0]])
for out, scale, sr, aligned in [((2, 2), 1.0, -1, False), ((3, 4), 0.5, 2, False), ((2, 3), 1.0, -1, True), ((1, 1), 2.0, 1, True)]:
    xg = fmap.clone().requires_grad_()
    y = ops.roi_align(xg, rois, out, spatial_scale=scale, sampling_ratio=sr, aligned=aligned)
    g, = torch.autograd.grad((y * ramp(y)).sum(), [xg])
    cases.append({"op": "roi_align", "a": enc(fmap), "b": enc(rois), "y": enc(y), "ga": enc(g),
                  "out": list(out), "scale": scale, "sr": sr, "aligned": aligned})

with open("gluon/model/vision/testdata/goldens_boxes.json", "w") as fh:
    json.dump({"generator": "make_goldens_boxes.py, torchvision", "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")
