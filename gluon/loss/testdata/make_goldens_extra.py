#!/usr/bin/python3
"""Generate PyTorch golden values for the margin, ranking, Poisson, CTC and
class-weighted losses of Goluon's gluon/loss (golden_extra_test.go).

Run:  /usr/bin/python3 make_goldens_extra.py   (writes goldens_extra.json)

float64 on CPU with a fixed seed; no network. PyTorch's own functions are
used where one exists (F.soft_margin_loss, F.cosine_embedding_loss,
F.poisson_nll_loss, F.ctc_loss, F.cross_entropy with weight=,
F.binary_cross_entropy_with_logits with pos_weight=, F.kl_div with
log_target=); Gluon's hinge, squared hinge and triplet losses have no
PyTorch function and are written from their definitions. Gluon's
conventions follow: sample weights multiply the unreduced loss, and each
sample's loss is the mean over every axis but the batch axis.

JSON: {"cases": [{"name", "kind", "config", "inputs": {name: T},
"head": T, "loss": T, "grads": {name: T}}]}, T = {"shape", "data"};
grads holds d(sum(head * loss)) / d(input) for each differentiable input.
"""

import json
import math
import os

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261129)


def rand(*shape, lo=-2.0, hi=2.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


def signs(*shape):
    return torch.randint(0, 2, shape, generator=gen).to(torch.float64) * 2 - 1


def enc(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def batch_mean(l):
    if l.dim() == 1:
        return l
    return l.mean(dim=tuple(range(1, l.dim())))


def weigh(l, sw, weight):
    if sw is not None:
        if sw.dim() < l.dim() and list(sw.shape) == list(l.shape[: sw.dim()]):
            sw = sw.reshape(list(sw.shape) + [1] * (l.dim() - sw.dim()))
        l = l * sw
    if weight:
        l = l * weight
    return l


def reference(kind, c, x):
    w = c.get("weight", 0.0)
    sw = x.get("sample_weight")
    if kind == "hinge":
        l = F.relu(c["margin"] - x["pred"] * x["label"].reshape(x["pred"].shape))
        return batch_mean(weigh(l, sw, w))
    if kind == "squared_hinge":
        l = F.relu(c["margin"] - x["pred"] * x["label"].reshape(x["pred"].shape)) ** 2
        return batch_mean(weigh(l, sw, w))
    if kind == "logistic":
        y = x["label"].reshape(x["pred"].shape)
        if c["binary"]:
            y = 2 * y - 1
        l = F.soft_margin_loss(x["pred"], y, reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "triplet":
        p, pos, neg = x["pred"], x["positive"], x["negative"]
        d = ((pos - p) ** 2 - (neg - p) ** 2).reshape(p.shape[0], -1).sum(dim=1)
        return weigh(F.relu(d + c["margin"]), sw, w)
    if kind == "cosine":
        a, b, y = x["input1"], x["input2"], x["label"]
        d = a.shape[-1]
        l = F.cosine_embedding_loss(a.reshape(-1, d), b.reshape(-1, d), y.reshape(-1),
                                    margin=c["margin"], reduction="none")
        return batch_mean(weigh(l.reshape(a.shape[:-1]), sw, w))
    if kind == "poisson":
        l = F.poisson_nll_loss(x["pred"], x["label"].reshape(x["pred"].shape),
                               log_input=c["log_input"], full=c["full"],
                               eps=1e-8, reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "ctc":
        pred = x["pred"]
        if c["layout"] == "NTC":
            pred = pred.transpose(0, 1)  # PyTorch wants T, N, C
        logp = torch.log_softmax(pred, dim=2)
        blank = c["blank"] if c["blank"] >= 0 else pred.shape[2] - 1
        l = F.ctc_loss(logp, x["label"].long(), x["pred_lengths"].long(),
                       x["label_lengths"].long(), blank=blank, reduction="none",
                       zero_infinity=c["zero_infinity"])
        return weigh(l, sw, w)
    if kind == "softmax_ce_weighted":
        pred, cw = x["pred"], x.get("class_weight")
        axis = c["axis"] % pred.dim()
        xx = pred.movedim(axis, 1)
        if c["sparse"]:
            shape = list(pred.shape)
            del shape[axis]
            tgt = x["label"].reshape(shape).long()
            kw = {"label_smoothing": c["label_smoothing"]}
            if c["use_ignore"]:
                kw["ignore_index"] = c["ignore_label"]
            if c["from_logits"]:
                l = F.nll_loss(xx, tgt, weight=cw, reduction="none", **{k: v for k, v in kw.items() if k == "ignore_index"})
            else:
                l = F.cross_entropy(xx, tgt, weight=cw, reduction="none", **kw)
            if c["token_mean"]:
                # PyTorch's reduction="mean" as per-sample values whose
                # batch mean it is: each sample's total times N over the
                # batch's count (the kept labels' weights).
                kept = torch.ones_like(tgt, dtype=torch.bool)
                if c["use_ignore"]:
                    kept = tgt != c["ignore_label"]
                lw = cw[tgt.clamp(min=0)] if cw is not None else torch.ones(tgt.shape)
                count = (lw * kept).sum()
                n = l.shape[0]
                l = l.reshape(n, -1).sum(dim=1) * n / count
                if c["from_logits"]:
                    ref = F.nll_loss(xx, tgt, weight=cw, reduction="mean", **{k: v for k, v in kw.items() if k == "ignore_index"})
                else:
                    ref = F.cross_entropy(xx, tgt, weight=cw, reduction="mean", **kw)
                assert abs(l.mean().item() - ref.item()) < 1e-12, (l.mean().item(), ref.item())
                return weigh(l, sw, w)
            if c["use_ignore"] and l.dim() > 1:
                keep = (tgt != c["ignore_label"]).to(l.dtype)
                dims = tuple(range(1, l.dim()))
                l = l * (keep[0].numel() / keep.sum(dim=dims, keepdim=True).clamp(min=1))
        else:
            tgt = x["label"].reshape(pred.shape).movedim(axis, 1)
            l = F.cross_entropy(xx, tgt, weight=cw, reduction="none")
        return batch_mean(weigh(l.unsqueeze(axis), sw, w))
    if kind == "bce_pos_weight":
        z = x["label"].reshape(x["pred"].shape)
        if c["from_sigmoid"]:
            p = x["pred"]
            l = -(x["pos_weight"] * z * torch.log(p + 1e-12) + (1 - z) * torch.log(1 - p + 1e-12))
        else:
            l = F.binary_cross_entropy_with_logits(x["pred"], z, pos_weight=x["pos_weight"],
                                                   reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "kl_log_target":
        l = F.kl_div(x["pred"], x["label"].reshape(x["pred"].shape), log_target=True,
                     reduction="none")
        return batch_mean(weigh(l, sw, w))
    raise ValueError(kind)


def case(name, kind, cfg, inputs, grad_of):
    full = {"weight": 0.0, "margin": 1.0, "binary": False, "log_input": True, "from_logits": False,
            "full": False, "layout": "NTC", "blank": -1, "zero_infinity": False,
            "axis": -1, "sparse": True, "use_ignore": False, "ignore_label": -100,
            "label_smoothing": 0.0, "from_sigmoid": False, "token_mean": False}
    full.update(cfg)
    x = {k: (v.clone().requires_grad_(k in grad_of) if v is not None else None)
         for k, v in inputs.items()}
    loss = reference(kind, full, x)
    head = torch.linspace(0.5, 2.0, loss.shape[0])
    (loss * head).sum().backward()
    return {"name": name, "kind": kind, "config": full,
            "inputs": {k: enc(v) for k, v in x.items() if v is not None},
            "head": enc(head), "loss": enc(loss),
            "grads": {k: enc(x[k].grad) for k in grad_of}}


def away(*shape, lo=-2.0, hi=2.0, gap=0.05, kinks=(0.0,)):
    """Random values at least gap away from every kink."""
    t = rand(*shape, lo=lo, hi=hi)
    for k in kinks:
        near = (t - k).abs() < gap
        t = torch.where(near, t + 3 * gap, t)
    return t


def main():
    cases = []
    # Hinge family: keep pred * label away from the margin (the kink).
    y = signs(4, 3)
    p = y * away(4, 3, kinks=(1.0,), lo=-2, hi=3)
    cases.append(case("hinge", "hinge", {}, {"pred": p, "label": y}, ["pred"]))
    y = signs(3, 2, 2)
    p = y * away(3, 2, 2, kinks=(0.5,))
    cases.append(case("hinge_margin_weighted", "hinge", {"margin": 0.5, "weight": 2.0},
                      {"pred": p, "label": y.reshape(3, 4),
                       "sample_weight": rand(3, lo=0.1, hi=2)}, ["pred"]))
    y = signs(4, 3)
    p = y * away(4, 3, kinks=(1.0,), lo=-2, hi=3)
    cases.append(case("squared_hinge", "squared_hinge", {}, {"pred": p, "label": y}, ["pred"]))
    cases.append(case("squared_hinge_margin0", "squared_hinge", {"margin": 0.0},
                      {"pred": away(5, 1), "label": signs(5)}, ["pred"]))
    # Logistic: scores include 0 and large magnitudes.
    big = torch.tensor([[0.0, 40.0, -40.0], [1.5, -0.7, 4.0]])
    cases.append(case("logistic_signed", "logistic", {}, {"pred": big, "label": signs(2, 3)}, ["pred"]))
    cases.append(case("logistic_binary_weighted", "logistic", {"binary": True, "weight": 0.5},
                      {"pred": rand(4, 3, lo=-5, hi=5),
                       "label": (signs(4, 3) + 1) / 2,
                       "sample_weight": rand(4, 1, lo=0.1, hi=2)}, ["pred"]))
    # Triplet: some samples clear the margin (loss 0), some do not.
    a = rand(5, 4)
    pos = a + 0.3 * rand(5, 4)
    neg = a + rand(5, 4, lo=-1.5, hi=1.5)
    cases.append(case("triplet", "triplet", {},
                      {"pred": a, "positive": pos, "negative": neg},
                      ["pred", "positive", "negative"]))
    a = rand(3, 2, 3)
    cases.append(case("triplet_3d_weighted", "triplet", {"margin": 0.2, "weight": 1.5},
                      {"pred": a, "positive": a + 0.6 * rand(3, 2, 3),
                       "negative": a + 0.6 * rand(3, 2, 3),
                       "sample_weight": rand(3, lo=0.1, hi=2)},
                      ["pred", "positive", "negative"]))
    # Cosine embedding.
    cases.append(case("cosine", "cosine", {},
                      {"input1": rand(6, 4), "input2": rand(6, 4), "label": signs(6)},
                      ["input1", "input2"]))
    x1 = rand(4, 5)
    x2 = x1 + 0.4 * rand(4, 5)
    cases.append(case("cosine_margin_weighted", "cosine", {"margin": -0.3, "weight": 2.0},
                      {"input1": x1, "input2": x2, "label": torch.tensor([1.0, -1.0, -1.0, 1.0]),
                       "sample_weight": rand(4, lo=0.1, hi=2)}, ["input1", "input2"]))
    cases.append(case("cosine_3d", "cosine", {"margin": 0.1},
                      {"input1": rand(2, 3, 4), "input2": rand(2, 3, 4), "label": signs(2, 3)},
                      ["input1", "input2"]))
    # Poisson NLL.
    counts = torch.randint(0, 6, (4, 3), generator=gen).to(torch.float64)
    cases.append(case("poisson_log_rate", "poisson", {},
                      {"pred": rand(4, 3, lo=-1, hi=1.5), "label": counts}, ["pred", "label"]))
    cases.append(case("poisson_rate_full_weighted", "poisson",
                      {"log_input": False, "full": True, "weight": 0.5},
                      {"pred": rand(4, 3, lo=0.2, hi=4), "label": counts,
                       "sample_weight": rand(4, lo=0.1, hi=2)},
                      ["pred"]))  # PyTorch's label gradient of the Stirling term is NaN at 0
    cases.append(case("poisson_log_rate_full", "poisson", {"full": True},
                      {"pred": rand(4, 3, lo=-1, hi=1.5), "label": counts}, ["pred"]))
    # CTC: padded labels, shorter pred lengths, repeats, an empty target.
    T, N, C = 12, 4, 6
    lab = torch.tensor([[1, 2, 2, 3], [4, 4, 0, 0], [3, 0, 0, 0], [0, 0, 0, 0]], dtype=torch.float64)
    cases.append(case("ctc_ntc_blank_last", "ctc", {},
                      {"pred": rand(N, T, C), "label": lab + 0,
                       "pred_lengths": torch.tensor([12.0, 10.0, 7.0, 5.0]),
                       "label_lengths": torch.tensor([4.0, 2.0, 1.0, 0.0])}, ["pred"]))
    lab0 = torch.tensor([[1, 2, 2, 3, 5], [4, 4, 1, 0, 0], [5, 0, 0, 0, 0]], dtype=torch.float64)
    cases.append(case("ctc_tnc_blank0_weighted", "ctc", {"layout": "TNC", "blank": 0, "weight": 2.0},
                      {"pred": rand(9, 3, C, lo=-3, hi=3), "label": lab0,
                       "pred_lengths": torch.tensor([9.0, 9.0, 4.0]),
                       "label_lengths": torch.tensor([5.0, 3.0, 1.0]),
                       "sample_weight": rand(3, lo=0.1, hi=2)}, ["pred"]))
    # Infeasible second sample (needs 5 steps, has 3): loss 0 with zero_infinity.
    cases.append(case("ctc_zero_infinity", "ctc", {"zero_infinity": True, "blank": 0},
                      {"pred": rand(2, 6, 4), "label": torch.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]]),
                       "pred_lengths": torch.tensor([6.0, 4.0]),
                       "label_lengths": torch.tensor([3.0, 3.0])}, ["pred"]))
    # Class-weighted softmax cross-entropy.
    cw = rand(5, lo=0.2, hi=3)
    labels = torch.randint(0, 5, (6,), generator=gen).to(torch.float64)
    cases.append(case("softmax_ce_class_weight", "softmax_ce_weighted", {},
                      {"pred": rand(6, 5), "label": labels, "class_weight": cw}, ["pred"]))
    cases.append(case("softmax_ce_class_weight_smoothing", "softmax_ce_weighted",
                      {"label_smoothing": 0.2, "weight": 1.5},
                      {"pred": rand(6, 5), "label": labels, "class_weight": cw,
                       "sample_weight": rand(6, lo=0.1, hi=2)}, ["pred"]))
    seq = torch.randint(0, 5, (2, 4), generator=gen).to(torch.float64)
    seq[0, 3] = -100
    seq[1, 0] = -100
    cases.append(case("softmax_ce_class_weight_ignore_smoothing", "softmax_ce_weighted",
                      {"use_ignore": True, "label_smoothing": 0.1},
                      {"pred": rand(2, 4, 5), "label": seq, "class_weight": cw}, ["pred"]))
    cases.append(case("softmax_ce_class_weight_axis1", "softmax_ce_weighted", {"axis": 1},
                      {"pred": rand(2, 5, 3), "label": torch.randint(0, 5, (2, 3), generator=gen).to(torch.float64),
                       "class_weight": cw}, ["pred"]))
    cases.append(case("softmax_ce_class_weight_from_logits", "softmax_ce_weighted", {"from_logits": True},
                      {"pred": torch.log_softmax(rand(6, 5), dim=-1), "label": labels, "class_weight": cw}, ["pred"]))
    cases.append(case("softmax_ce_class_weight_dense", "softmax_ce_weighted", {"sparse": False},
                      {"pred": rand(4, 5), "label": torch.softmax(rand(4, 5), dim=-1), "class_weight": cw},
                      ["pred", "label"]))
    # BCE with positive weights; logits include 0 and large magnitudes.
    logits = torch.tensor([[0.0, 30.0, -30.0], [1.5, -0.7, 4.0], [-2.5, 0.0, 12.0], [-12.0, 0.9, -0.1]])
    zs = torch.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 0.3], [1.0, 0.0, 0.0], [1.0, 0.5, 1.0]])
    cases.append(case("bce_pos_weight_logits", "bce_pos_weight", {},
                      {"pred": logits, "label": zs, "pos_weight": torch.tensor([0.5, 2.0, 3.0])},
                      ["pred", "label"]))  # PyTorch has no pos_weight gradient
    cases.append(case("bce_pos_weight_sigmoid_weighted", "bce_pos_weight", {"from_sigmoid": True, "weight": 2.0},
                      {"pred": rand(4, 3, lo=0.05, hi=0.95), "label": zs,
                       "pos_weight": torch.tensor([[1.5], [0.5], [2.0], [1.0]]),
                       "sample_weight": rand(4, lo=0.1, hi=2)}, ["pred", "label", "pos_weight"]))
    # KL divergence with log-probability targets.
    cases.append(case("kl_log_target", "kl_log_target", {"weight": 0.5},
                      {"pred": torch.log_softmax(rand(3, 4), dim=-1),
                       "label": torch.log_softmax(rand(3, 4, lo=-20, hi=2), dim=-1)},
                      ["pred", "label"]))

    # TokenMean: PyTorch's mean over the batch's counted positions.
    tm = torch.randint(0, 5, (3, 4), generator=gen).to(torch.float64)
    tm[0, 1] = tm[0, 3] = tm[2, 0] = -100
    cases.append(case("softmax_ce_token_mean_ignore", "softmax_ce_weighted",
                      {"use_ignore": True, "token_mean": True},
                      {"pred": rand(3, 4, 5), "label": tm}, ["pred"]))
    cases.append(case("softmax_ce_token_mean_class_weight_smoothing", "softmax_ce_weighted",
                      {"use_ignore": True, "token_mean": True, "label_smoothing": 0.1, "weight": 2.0},
                      {"pred": rand(3, 4, 5), "label": tm, "class_weight": cw,
                       "sample_weight": rand(3, lo=0.1, hi=2)}, ["pred"]))
    flat = torch.randint(0, 5, (6,), generator=gen).to(torch.float64)
    flat[4] = -100
    cases.append(case("softmax_ce_token_mean_2d_from_logits", "softmax_ce_weighted",
                      {"use_ignore": True, "token_mean": True, "from_logits": True},
                      {"pred": torch.log_softmax(rand(6, 5), dim=-1), "label": flat, "class_weight": cw}, ["pred"]))
    cases.append(case("softmax_ce_token_mean_axis1", "softmax_ce_weighted", {"token_mean": True, "axis": 1},
                      {"pred": rand(2, 5, 3), "label": torch.randint(0, 5, (2, 3), generator=gen).to(torch.float64),
                       "class_weight": cw}, ["pred"]))

    out = {"generator": "make_goldens_extra.py, torch " + torch.__version__, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens_extra.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases to", path)


if __name__ == "__main__":
    main()
