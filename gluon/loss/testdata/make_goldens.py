#!/usr/bin/python3
"""Generate PyTorch golden values for Goluon's gluon/loss tests.

Run:  /usr/bin/python3 make_goldens.py   (writes goldens.json next to this file)

Everything is float64 on CPU with a fixed seed, so the output is
deterministic; no network is needed. The references use PyTorch's own loss
functions (F.mse_loss, F.l1_loss, F.binary_cross_entropy[_with_logits],
F.cross_entropy, F.nll_loss) followed by MXNet Gluon's conventions:

  * L2 is 0.5 * (pred - label)^2 (times weight), as Gluon's L2Loss;
  * sample weights multiply the unreduced loss (for softmax cross-entropy
    the loss keeps the class axis with size 1, as Gluon's keepdims=True);
  * the result is the mean over every axis except the batch axis 0;
  * "from_logits" means pred already holds log-probabilities (Gluon's
    naming; in PyTorch terms that is nll_loss, not cross_entropy).

JSON schema (parsed by golden_test.go):
{
  "generator": "...",
  "cases": [
    {"name": "...", "kind": "l2|l1|sigmoid_bce|softmax_ce",
     "config": {"weight": w (0 = unset), "axis": a, "sparse": b,
                "from_logits": b, "from_sigmoid": b},
     "pred": T, "label": T, "sample_weight": T or null, "head": T,
     "loss": T,        # per-sample loss, shape [N]
     "grad_pred": T}   # d(sum(head * loss)) / d(pred)
  ]
}
where T = {"shape": [...], "data": [flat row-major float64]}.
"""

import json
import os

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20240607)


def rand(*shape, lo=-2.0, hi=2.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


def classes(n, *shape):
    return torch.randint(0, n, shape, generator=gen).to(torch.float64)


def probs(*shape, axis=-1):
    return torch.softmax(rand(*shape), dim=axis)


def enc(t):
    if t is None:
        return None
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def batch_mean(l):
    if l.dim() == 1:
        return l
    return l.mean(dim=tuple(range(1, l.dim())))


def per_sample(sw, l):
    """Align a sample-weight array on the batch axis, as the Go package
    does: a shape that is a prefix of the loss's gains trailing 1-axes."""
    if sw is None:
        return None
    if sw.dim() < l.dim() and list(sw.shape) == list(l.shape[: sw.dim()]):
        return sw.reshape(list(sw.shape) + [1] * (l.dim() - sw.dim()))
    return sw


def weigh(l, sw, weight):
    if sw is not None:
        l = l * per_sample(sw, l)
    if weight:
        l = l * weight
    return l


def reference(kind, cfg, pred, label, sw):
    w = cfg.get("weight", 0.0)
    if kind == "l2":
        label = label.reshape(pred.shape)
        l = 0.5 * F.mse_loss(pred, label, reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "l1":
        label = label.reshape(pred.shape)
        l = F.l1_loss(pred, label, reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "sigmoid_bce":
        label = label.reshape(pred.shape)
        if cfg.get("from_sigmoid"):
            l = F.binary_cross_entropy(pred, label, reduction="none")
        else:
            l = F.binary_cross_entropy_with_logits(pred, label, reduction="none")
        return batch_mean(weigh(l, sw, w))
    if kind == "softmax_ce":
        axis = cfg["axis"] % pred.dim()
        x = pred.movedim(axis, 1)  # PyTorch wants classes on dim 1
        if cfg["sparse"]:
            shape = list(pred.shape)
            del shape[axis]
            tgt = label.reshape(shape).long()
            if cfg.get("from_logits"):
                l = F.nll_loss(x, tgt, reduction="none")
            else:
                l = F.cross_entropy(x, tgt, reduction="none")
        else:
            tgt = label.reshape(pred.shape).movedim(axis, 1)
            if cfg.get("from_logits"):
                l = -(x * tgt).sum(dim=1)
            else:
                l = F.cross_entropy(x, tgt, reduction="none")
        l = l.unsqueeze(axis)  # Gluon keeps the class axis (keepdims=True)
        return batch_mean(weigh(l, sw, w))
    if kind == "softmax_ce_ignore":
        # Sparse labels with ignore_index and label_smoothing; a sample's
        # loss is the mean over its counted positions (Goluon's rule).
        axis = cfg["axis"] % pred.dim()
        x = pred.movedim(axis, 1)
        shape = list(pred.shape)
        del shape[axis]
        tgt = label.reshape(shape).long()
        kw = {"label_smoothing": cfg["label_smoothing"]}
        if cfg["use_ignore"]:
            kw["ignore_index"] = cfg["ignore_label"]
        l = F.cross_entropy(x, tgt, reduction="none", **kw)
        if cfg["use_ignore"] and l.dim() > 1:
            keep = (tgt != cfg["ignore_label"]).to(l.dtype)
            dims = tuple(range(1, l.dim()))
            l = l * (keep[0].numel() / keep.sum(dim=dims, keepdim=True).clamp(min=1))
        l = weigh(l.unsqueeze(axis), sw, w)
        return batch_mean(l)
    if kind == "kl_div":
        label = label.reshape(pred.shape)
        logp = pred if cfg["from_logits"] else torch.log_softmax(pred, dim=cfg["axis"])
        return batch_mean(weigh(F.kl_div(logp, label, reduction="none"), sw, w))
    if kind == "huber":
        label = label.reshape(pred.shape)
        l = F.smooth_l1_loss(pred, label, reduction="none", beta=cfg["rho"])
        return batch_mean(weigh(l, sw, w))
    raise ValueError(kind)


def case(name, kind, cfg, pred, label, sw=None):
    full = {"weight": 0.0, "axis": -1, "sparse": True, "from_logits": False,
            "from_sigmoid": False, "use_ignore": False, "ignore_label": 0,
            "label_smoothing": 0.0, "rho": 1.0}
    full.update(cfg)
    pred = pred.clone().requires_grad_(True)
    loss = reference(kind, full, pred, label, sw)
    n = loss.shape[0]
    head = torch.linspace(0.5, 2.0, n)
    (loss * head).sum().backward()
    return {"name": name, "kind": kind, "config": full, "pred": enc(pred),
            "label": enc(label), "sample_weight": enc(sw), "head": enc(head),
            "loss": enc(loss), "grad_pred": enc(pred.grad)}


def main():
    cases = []
    # L2 / L1
    cases.append(case("l2_basic", "l2", {}, rand(4, 3), rand(4, 3)))
    cases.append(case("l2_reshape_label", "l2", {}, rand(5, 1), rand(5)))
    cases.append(case("l2_weighted", "l2", {"weight": 3.0}, rand(4, 3), rand(4, 3),
                      rand(4, lo=0.1, hi=2.0)))
    cases.append(case("l2_3d", "l2", {}, rand(2, 3, 2), rand(2, 3, 2),
                      rand(2, 1, 1, lo=0.1, hi=2.0)))
    cases.append(case("l1_basic", "l1", {}, rand(4, 3), rand(4, 3)))
    cases.append(case("l1_weighted", "l1", {"weight": 0.5}, rand(4, 3), rand(4, 3),
                      rand(4, 3, lo=0.1, hi=2.0)))
    # Sigmoid binary cross-entropy; logits include 0 and large magnitudes.
    logits = torch.tensor([[0.0, 30.0, -30.0], [1.5, -0.7, 4.0],
                           [-2.5, 0.3, 12.0], [-12.0, 0.9, -0.1]])
    zs = torch.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 0.3],
                       [1.0, 0.0, 0.0], [1.0, 0.5, 1.0]])
    cases.append(case("sigmoid_bce_logits", "sigmoid_bce", {}, logits, zs))
    cases.append(case("sigmoid_bce_logits_weighted", "sigmoid_bce", {"weight": 2.0},
                      rand(4, 3, lo=-4, hi=4), zs, rand(4, 1, lo=0.1, hi=2.0)))
    cases.append(case("sigmoid_bce_sigmoid", "sigmoid_bce", {"from_sigmoid": True},
                      rand(4, 3, lo=0.05, hi=0.95), zs))
    cases.append(case("sigmoid_bce_sigmoid_weighted", "sigmoid_bce",
                      {"from_sigmoid": True, "weight": 0.25},
                      rand(4, 3, lo=0.05, hi=0.95), zs, rand(4, lo=0.1, hi=2.0)))
    # Softmax cross-entropy.
    cases.append(case("softmax_ce_sparse", "softmax_ce", {}, rand(4, 5), classes(5, 4)))
    cases.append(case("softmax_ce_sparse_label_column", "softmax_ce", {},
                      rand(4, 5), classes(5, 4, 1)))
    cases.append(case("softmax_ce_sparse_weighted", "softmax_ce", {"weight": 0.5},
                      rand(4, 5), classes(5, 4), rand(4, lo=0.1, hi=2.0)))
    cases.append(case("softmax_ce_dense", "softmax_ce", {"sparse": False},
                      rand(4, 5), probs(4, 5)))
    cases.append(case("softmax_ce_dense_weighted", "softmax_ce",
                      {"sparse": False, "weight": 2.0},
                      rand(4, 5), probs(4, 5), rand(4, 1, lo=0.1, hi=2.0)))
    cases.append(case("softmax_ce_from_logits", "softmax_ce", {"from_logits": True},
                      torch.log_softmax(rand(4, 5), dim=-1), classes(5, 4)))
    cases.append(case("softmax_ce_dense_from_logits", "softmax_ce",
                      {"sparse": False, "from_logits": True},
                      torch.log_softmax(rand(4, 5), dim=-1), probs(4, 5)))
    cases.append(case("softmax_ce_axis1", "softmax_ce", {"axis": 1},
                      rand(2, 4, 3), classes(4, 2, 3)))
    cases.append(case("softmax_ce_sequence", "softmax_ce", {},
                      rand(2, 3, 5), classes(5, 2, 3), rand(2, lo=0.1, hi=2.0)))
    cases.append(case("softmax_ce_dense_axis1", "softmax_ce", {"axis": 1, "sparse": False},
                      rand(2, 4, 3), probs(2, 4, 3, axis=1)))

    # Sequence-model additions (generated after the cases above, so their
    # values do not move): padding labels, label smoothing, KL, Huber.
    padded = classes(5, 2, 4)
    padded[0, 3] = -100
    padded[1, 1] = -100
    padded[1, 2] = -100
    cases.append(case("softmax_ce_ignore_padding", "softmax_ce_ignore",
                      {"use_ignore": True, "ignore_label": -100}, rand(2, 4, 5), padded))
    cases.append(case("softmax_ce_label_smoothing", "softmax_ce_ignore",
                      {"label_smoothing": 0.1}, rand(4, 5), classes(5, 4)))
    allpad = classes(5, 2, 3)
    allpad[1, :] = 2
    cases.append(case("softmax_ce_ignore_smoothing_weighted", "softmax_ce_ignore",
                      {"use_ignore": True, "ignore_label": 2, "label_smoothing": 0.2, "weight": 1.5},
                      rand(2, 3, 5), allpad, rand(2, lo=0.1, hi=2.0)))
    cases.append(case("kl_div_log_probs", "kl_div", {"from_logits": True},
                      torch.log_softmax(rand(4, 5), dim=-1), probs(4, 5)))
    zlabel = probs(3, 4)
    zlabel[0, 1] = 0.0
    cases.append(case("kl_div_scores_zero_label", "kl_div", {"from_logits": False, "weight": 2.0},
                      rand(3, 4), zlabel))
    cases.append(case("huber_rho1", "huber", {}, rand(4, 3, lo=-3, hi=3), rand(4, 3, lo=-3, hi=3)))
    cases.append(case("huber_rho_half_weighted", "huber", {"rho": 0.5, "weight": 2.0},
                      rand(3, 4), rand(3, 4), rand(3, lo=0.1, hi=2.0)))

    out = {"generator": "make_goldens.py, torch " + torch.__version__, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases to", path)


if __name__ == "__main__":
    main()
