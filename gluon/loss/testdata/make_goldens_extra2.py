#!/usr/bin/python3
"""Generate PyTorch golden values for the Gaussian NLL, multi-margin and
margin ranking losses of Goluon's gluon/loss, and for the PyTorch losses
other Goluon losses already are (NLLLoss as SoftmaxCrossEntropy with
FromLogits, MultiLabelSoftMarginLoss as SigmoidBCE) (golden_extra2_test.go).

Run:  /usr/bin/python3 make_goldens_extra2.py   (writes goldens_extra2.json)

float64 on CPU with a fixed seed; no network; torch 1.13's own functions
(F.gaussian_nll_loss, F.multi_margin_loss, F.margin_ranking_loss,
F.nll_loss, F.multilabel_soft_margin_loss) with reduction="none", then
Gluon's conventions: sample weights multiply the unreduced loss, and each
sample's loss is the mean over every axis but the batch axis.

JSON: {"cases": [{"name", "kind", "config", "inputs": {name: T},
"head": T, "loss": T, "grads": {name: T}}]}, T = {"shape", "data"};
grads holds d(sum(head * loss)) / d(input) for each differentiable input.
"""

import json
import os

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261201)


def rand(*shape, lo=-2.0, hi=2.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


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
    if kind == "gaussian_nll":
        # Gluon's rule first (labels of as many elements take pred's
        # shape), else torch's broadcasting of the target.
        lab = x["label"]
        if lab.numel() == x["pred"].numel():
            lab = lab.reshape(x["pred"].shape)
        l = F.gaussian_nll_loss(x["pred"], lab, x["var"], full=c["full"],
                                eps=c["eps"] or 1e-6, reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "multi_margin":
        l = F.multi_margin_loss(x["pred"], x["label"].long(), p=c["p"], margin=c["margin"],
                                weight=x.get("class_weight"), reduction="none")
        return weigh(l, sw, w)
    if kind == "margin_ranking":
        a = x["input1"]
        l = F.margin_ranking_loss(a, x["input2"].reshape(a.shape), x["label"].reshape(a.shape),
                                  margin=c["margin"], reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "nll":
        # torch's [N, C, d...] layout, reduction "mean" as per-sample
        # values whose batch mean it is (SoftmaxCrossEntropy's TokenMean).
        logp, tgt, cw = x["pred"], x["label"].long(), x.get("class_weight")
        l = F.nll_loss(logp, tgt, weight=cw, ignore_index=c["ignore_label"], reduction="none")
        kept = tgt != c["ignore_label"]
        lw = cw[tgt.clamp(min=0)] if cw is not None else torch.ones(tgt.shape)
        n = l.shape[0]
        per = l.reshape(n, -1).sum(dim=1) * n / (lw * kept).sum()
        ref = F.nll_loss(logp, tgt, weight=cw, ignore_index=c["ignore_label"], reduction="mean")
        assert abs(per.mean().item() - ref.item()) < 1e-12
        return weigh(per, sw, w)
    if kind == "multilabel_soft_margin":
        return weigh(F.multilabel_soft_margin_loss(x["pred"], x["label"], weight=x.get("class_weight"),
                                                   reduction="none"), sw, w)
    raise ValueError(kind)


def case(name, kind, cfg, inputs, grad_of):
    full = {"weight": 0.0, "margin": 1.0, "p": 1, "full": False, "eps": 0.0, "ignore_label": -100}
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


def main():
    cases = []
    # Gaussian NLL: a variance per prediction, per row (the last axis
    # removed or of size 1), variances below eps (clamped; gradient still
    # flows), full, weights. (Targets that broadcast: at the end, so that
    # the earlier cases keep their draws.)
    var = rand(4, 3, lo=0.05, hi=2)
    cases.append(case("gaussian_nll", "gaussian_nll", {},
                      {"pred": rand(4, 3), "label": rand(4, 3), "var": var}, ["pred", "label", "var"]))
    small = torch.tensor([[0.5, 1e-8, 0.0], [2.0, 3e-7, 1.0]])
    cases.append(case("gaussian_nll_clamped_full", "gaussian_nll", {"full": True, "eps": 1e-3},
                      {"pred": rand(2, 3), "label": rand(2, 3), "var": small}, ["pred", "label", "var"]))
    cases.append(case("gaussian_nll_row_var_weighted", "gaussian_nll", {"weight": 2.0},
                      {"pred": rand(3, 2, 4), "label": rand(3, 2, 4), "var": rand(3, 2, lo=0.1, hi=2),
                       "sample_weight": rand(3, lo=0.1, hi=2)}, ["pred", "label", "var"]))
    cases.append(case("gaussian_nll_row_var_1", "gaussian_nll", {},
                      {"pred": rand(3, 4), "label": rand(3, 4), "var": rand(3, 1, lo=0.1, hi=2)},
                      ["pred", "label", "var"]))
    # Multi-margin: p 1 and 2, margins, class weights, and terms exactly
    # at the hinge (gradient 0).
    lab = torch.tensor([0.0, 2.0, 1.0, 3.0, 2.0])
    cases.append(case("multi_margin", "multi_margin", {},
                      {"pred": rand(5, 4), "label": lab}, ["pred"]))
    cases.append(case("multi_margin_p2_weighted", "multi_margin", {"p": 2, "margin": 0.7, "weight": 1.5},
                      {"pred": rand(5, 4), "label": lab, "class_weight": rand(4, lo=0.2, hi=3),
                       "sample_weight": rand(5, lo=0.1, hi=2)}, ["pred"]))
    kink = torch.tensor([[1.0, 2.0, 0.0], [0.5, 0.5, 3.0]])  # 1 − 2 + 1 = 0; 1 − 0.5 + 0.5 = 1
    cases.append(case("multi_margin_kink", "multi_margin", {},
                      {"pred": kink, "label": torch.tensor([1.0, 0.0])}, ["pred"]))
    # Margin ranking: margins, a 2-D batch, terms exactly 0 (gradient
    # passes).
    y = torch.randint(0, 2, (6,), generator=gen).to(torch.float64) * 2 - 1
    cases.append(case("margin_ranking", "margin_ranking", {"margin": 0.0},
                      {"input1": rand(6), "input2": rand(6), "label": y}, ["input1", "input2"]))
    cases.append(case("margin_ranking_2d_weighted", "margin_ranking", {"margin": 0.5, "weight": 2.0},
                      {"input1": rand(3, 4), "input2": rand(3, 4),
                       "label": torch.randint(0, 2, (3, 4), generator=gen).to(torch.float64) * 2 - 1,
                       "sample_weight": rand(3, lo=0.1, hi=2)}, ["input1", "input2"]))
    cases.append(case("margin_ranking_kink", "margin_ranking", {"margin": 0.0},
                      {"input1": torch.tensor([1.0, 2.0, -1.0]), "input2": torch.tensor([1.0, 0.0, -1.0]),
                       "label": torch.tensor([1.0, 1.0, -1.0])}, ["input1", "input2"]))
    # NLLLoss in torch's layout [N, C, d] with class weights and an
    # ignored index.
    logp = torch.log_softmax(rand(3, 5, 4), dim=1)
    tgt = torch.randint(0, 5, (3, 4), generator=gen).to(torch.float64)
    tgt[0, 2] = tgt[2, 0] = -100
    cases.append(case("nll_axis1_weight_ignore", "nll", {},
                      {"pred": logp, "label": tgt, "class_weight": rand(5, lo=0.2, hi=3)}, ["pred"]))
    # MultiLabelSoftMarginLoss, with and without class weights.
    z = torch.randint(0, 2, (4, 5), generator=gen).to(torch.float64)
    cases.append(case("multilabel_soft_margin", "multilabel_soft_margin", {},
                      {"pred": rand(4, 5, lo=-4, hi=4), "label": z}, ["pred", "label"]))
    cases.append(case("multilabel_soft_margin_weighted", "multilabel_soft_margin", {},
                      {"pred": rand(4, 5, lo=-4, hi=4), "label": z, "class_weight": rand(5, lo=0.2, hi=3)},
                      ["pred", "label"]))
    # Gaussian NLL with targets that broadcast to the predictions, as
    # torch's GaussianNLLLoss documents them: one per row ([N, 1] for
    # [N, C]), with a row variance too, and without the batch axis.
    cases.append(case("gaussian_nll_target_n1", "gaussian_nll", {},
                      {"pred": rand(4, 3), "label": rand(4, 1), "var": rand(4, 3, lo=0.1, hi=2)},
                      ["pred", "label", "var"]))
    cases.append(case("gaussian_nll_target_row_var_row", "gaussian_nll", {"weight": 0.5},
                      {"pred": rand(2, 3, 4), "label": rand(2, 3, 1), "var": rand(2, 3, lo=0.1, hi=2),
                       "sample_weight": rand(2, lo=0.1, hi=2)}, ["pred", "label", "var"]))
    cases.append(case("gaussian_nll_target_no_batch", "gaussian_nll", {"full": True},
                      {"pred": rand(3, 4), "label": rand(4), "var": rand(3, 1, lo=0.1, hi=2)},
                      ["pred", "label", "var"]))

    out = {"generator": "make_goldens_extra2.py, torch " + torch.__version__, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens_extra2.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases to", path)


if __name__ == "__main__":
    main()
