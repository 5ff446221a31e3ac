#!/usr/bin/python3
"""Writes goldens.json for golden_test.go: a few update steps of each rule.

Run with Debian's python3 and torch 1.13, from this directory:

    /usr/bin/python3 make_goldens.py

Every case starts from the same weights and feeds the same fixed sequence of
gradients, in float64. A case's "source" says where its expected weights
come from:

  "torch"  torch.optim, with settings under which PyTorch's rule and MXNet's
           (the rule the Go code implements) coincide exactly:
             SGD momentum          constant lr (torch keeps lr out of the
                                   buffer, MXNet's sgd_mom_update keeps it in)
             SGD nesterov          any lr (MXNet's nag_mom_update is torch's)
             Adam                  eps = 0 (torch adds eps to
                                   sqrt(v)/sqrt(1-beta2^t), MXNet to sqrt(v))
             RMSprop               compared with our KerasEpsilon form (torch
                                   adds eps after the sqrt, MXNet under it);
                                   centered with momentum = gamma2
             Adagrad               compared with our TorchForm (MXNet 1.x puts
                                   eps under the sqrt and keeps wd out of the
                                   history)
  "mxnet"  MXNet 1.x's formula (optimizer.py and the optimizer_op kernels)
           written out below by hand with torch tensors, for the settings
           where torch differs: changing lr with SGD momentum, Adam's and
           RMSProp's eps placement, AdaGrad's default form, rescale_grad,
           clip_gradient (applied before wd for SGD/NAG/AdaGrad and after
           it for Adam/RMSProp), lr_mult and wd_mult.

Each case lists its optimizer settings under "params" in the Go field
names' spirit; "lrs" (when present) is the learning rate of each step.
"""
import json
import math

import torch

torch.set_default_dtype(torch.float64)
STEPS = 5
SHAPE = [2, 3]


def fixed(seed, lo, hi):
    g = torch.Generator().manual_seed(seed)
    x = lo + (hi - lo) * torch.rand(SHAPE, generator=g)
    return [round(v, 4) for v in x.flatten().tolist()]


W0 = fixed(1, -1.0, 1.0)
# Gradients of mixed sign and size, none zero (Adam with eps 0 divides by |g|).
GRADS = []
for s in range(STEPS):
    g = fixed(100 + s, -1.5, 1.5)
    GRADS.append([v if abs(v) > 0.05 else 0.05 for v in g])


def t(v):
    return torch.tensor(v).reshape(SHAPE)


def run_torch(make_opt, lrs=None):
    p = torch.nn.Parameter(t(W0).clone())
    opt = make_opt([p])
    out = []
    for s in range(STEPS):
        if lrs is not None:
            for grp in opt.param_groups:
                grp["lr"] = lrs[s]
        p.grad = t(GRADS[s]).clone()
        opt.step()
        out.append(p.detach().flatten().tolist())
    return out


def clip(g, c):
    return g.clamp(-c, c) if c > 0 else g


def run_mxnet(rule, pr, lrs):
    """MXNet 1.x's update rules, one per optimizer name."""
    w = t(W0).clone()
    st = [torch.zeros(SHAPE) for _ in range(3)]
    rescale, c = pr.get("rescale", 1.0), pr.get("clip", 0.0)
    wd = pr.get("wd", 0.0) * pr.get("wd_mult", 1.0)
    out = []
    for s in range(STEPS):
        lr = lrs[s] * pr.get("lr_mult", 1.0)
        g = t(GRADS[s])
        if rule == "sgd":  # sgd_mom_update: mom = mu*mom - lr*wd*w - lr*clip(rescale*g)
            gg = clip(rescale * g, c) + wd * w
            st[0] = pr["momentum"] * st[0] - lr * gg
            w = w + st[0]
        elif rule == "nag":  # nag_mom_update
            gg = clip(rescale * g, c) + wd * w
            st[0] = pr["momentum"] * st[0] + gg
            w = w - lr * (gg + pr["momentum"] * st[0])
        elif rule == "adam":  # Adam.update + adam_update
            n = s + 1
            lr_t = lr * math.sqrt(1 - pr["beta2"] ** n) / (1 - pr["beta1"] ** n)
            gg = clip(rescale * g + wd * w, c)
            st[0] = pr["beta1"] * st[0] + (1 - pr["beta1"]) * gg
            st[1] = pr["beta2"] * st[1] + (1 - pr["beta2"]) * gg * gg
            w = w - lr_t * st[0] / (st[1].sqrt() + pr["eps"])
        elif rule == "rmsprop":  # rmsprop_update / rmspropalex_update
            g1, eps = pr["gamma1"], pr["eps"]
            gg = clip(rescale * g + wd * w, c)
            st[0] = (1 - g1) * gg * gg + g1 * st[0]
            if pr.get("centered"):
                st[1] = (1 - g1) * gg + g1 * st[1]
                st[2] = pr["gamma2"] * st[2] - lr * gg / (st[0] - st[1] * st[1] + eps).sqrt()
                w = w + st[2]
            else:
                w = w - lr * gg / (st[0] + eps).sqrt()
        elif rule == "adagrad":  # AdaGrad.update, dense branch
            gg = clip(rescale * g, c)
            st[0] = st[0] + gg * gg
            w = w - lr * (gg / (st[0] + pr["eps"]).sqrt() + wd * w)
        else:
            raise ValueError(rule)
        out.append(w.flatten().tolist())
    return out


CASES = []


def case(name, source, opt, params, weights, lrs=None, note=""):
    c = {"name": name, "source": source, "optimizer": opt, "params": params,
         "weights": weights}
    if lrs is not None:
        c["lrs"] = lrs
    if note:
        c["note"] = note
    CASES.append(c)


O = torch.optim
CONST = [0.1] * STEPS
SCHED = [0.1, 0.05, 0.2, 0.02, 0.08]

# ---- PyTorch, where its rule is MXNet's ----
case("sgd", "torch", "sgd", {"lr": 0.1},
     run_torch(lambda ps: O.SGD(ps, lr=0.1)))
case("sgd_wd", "torch", "sgd", {"lr": 0.1, "wd": 0.05},
     run_torch(lambda ps: O.SGD(ps, lr=0.1, weight_decay=0.05)))
case("sgd_momentum_wd", "torch", "sgd", {"lr": 0.1, "momentum": 0.9, "wd": 0.05},
     run_torch(lambda ps: O.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.05)))
case("nag_momentum_wd", "torch", "nag", {"lr": 0.1, "momentum": 0.9, "wd": 0.05},
     run_torch(lambda ps: O.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05)))
case("nag_momentum_lr_changing", "torch", "nag", {"momentum": 0.8},
     run_torch(lambda ps: O.SGD(ps, lr=0.1, momentum=0.8, nesterov=True), SCHED), lrs=SCHED,
     note="MXNet's nag keeps lr out of the buffer, like torch")
case("adam_eps0_wd", "torch", "adam",
     {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 0.0, "wd": 0.05},
     run_torch(lambda ps: O.Adam(ps, lr=0.01, betas=(0.9, 0.999), eps=0.0, weight_decay=0.05)))
case("adam_eps0_betas", "torch", "adam",
     {"lr": 0.05, "beta1": 0.5, "beta2": 0.9, "eps": 0.0},
     run_torch(lambda ps: O.Adam(ps, lr=0.05, betas=(0.5, 0.9), eps=0.0)))
case("adamw_default", "torch", "adamw",
     {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.01},
     run_torch(lambda ps: O.AdamW(ps, lr=0.01)))
case("adamw_wd_betas_eps", "torch", "adamw",
     {"lr": 0.05, "beta1": 0.8, "beta2": 0.95, "eps": 1e-3, "wd": 0.3},
     run_torch(lambda ps: O.AdamW(ps, lr=0.05, betas=(0.8, 0.95), eps=1e-3, weight_decay=0.3)))
case("adamw_lr_changing", "torch", "adamw",
     {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.1},
     run_torch(lambda ps: O.AdamW(ps, lr=0.1, weight_decay=0.1), SCHED), lrs=SCHED,
     note="the decay uses the step's learning rate, as torch's")
case("rmsprop_keras_eps", "torch", "rmsprop",
     {"lr": 0.01, "gamma1": 0.9, "eps": 1e-3, "keras_eps": True, "wd": 0.05},
     run_torch(lambda ps: O.RMSprop(ps, lr=0.01, alpha=0.9, eps=1e-3, weight_decay=0.05)))
case("rmsprop_centered_keras_eps", "torch", "rmsprop",
     {"lr": 0.01, "gamma1": 0.95, "gamma2": 0.8, "eps": 1e-3, "keras_eps": True,
      "centered": True},
     run_torch(lambda ps: O.RMSprop(ps, lr=0.01, alpha=0.95, eps=1e-3, momentum=0.8,
                                    centered=True)))
case("adagrad_torchform_wd", "torch", "adagrad",
     {"lr": 0.1, "eps": 1e-10, "torch_form": True, "wd": 0.05},
     run_torch(lambda ps: O.Adagrad(ps, lr=0.1, eps=1e-10, weight_decay=0.05)))

# ---- MXNet 1.x formulas where torch differs ----
def mx(name, rule, params, lrs=CONST, note=""):
    p = dict(params)
    if lrs is CONST:
        p["lr"] = CONST[0]
    case(name, "mxnet", rule, p, run_mxnet(rule, p, lrs),
         lrs=None if lrs is CONST else lrs, note=note)


mx("sgd_momentum_lr_changing", "sgd", {"momentum": 0.9, "wd": 0.05}, SCHED,
   note="torch would give different weights: its buffer holds no lr")
mx("sgd_momentum_rescale_clip", "sgd",
   {"momentum": 0.9, "wd": 0.05, "rescale": 0.5, "clip": 0.3})
mx("nag_rescale_clip_mults", "nag",
   {"momentum": 0.9, "wd": 0.05, "rescale": 2.0, "clip": 1.0, "lr_mult": 0.5, "wd_mult": 3.0})
mx("adam_mxnet_eps", "adam", {"beta1": 0.9, "beta2": 0.999, "eps": 1e-2},
   note="eps large enough that torch's placement would differ visibly")
mx("adam_default_eps", "adam", {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.05})
mx("adam_rescale_clip_wd", "adam",
   {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.5, "rescale": 0.5, "clip": 0.4,
    "lr_mult": 2.0}, note="clip applies to rescale*g + wd*w")
mx("rmsprop_mxnet_eps", "rmsprop", {"gamma1": 0.9, "eps": 1e-2, "wd": 0.05})
mx("rmsprop_centered_mxnet", "rmsprop",
   {"gamma1": 0.95, "gamma2": 0.8, "eps": 1e-2, "centered": True}, SCHED)
mx("rmsprop_rescale_clip_wd", "rmsprop",
   {"gamma1": 0.9, "eps": 1e-8, "wd": 0.5, "rescale": 0.5, "clip": 0.4, "wd_mult": 2.0})
mx("adagrad_mxnet_wd", "adagrad", {"eps": 1e-2, "wd": 0.05},
   note="wd is decoupled from the history, eps sits under the sqrt")
mx("adagrad_rescale_clip", "adagrad",
   {"eps": 1e-7, "wd": 0.1, "rescale": 0.5, "clip": 0.4, "lr_mult": 3.0, "wd_mult": 0.5})

# Show that the settings above are needed: the two rules part company here.
diff = abs(run_torch(lambda ps: O.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.05), SCHED)[-1][0]
           - CASES[[c["name"] for c in CASES].index("sgd_momentum_lr_changing")]["weights"][-1][0])
assert diff > 1e-3, diff

head = {"generator": "make_goldens.py (torch %s, float64)" % torch.__version__,
        "steps": STEPS, "shape": SHAPE, "w0": W0, "grads": GRADS}
with open("goldens.json", "w") as f:  # one case a line: small, diffable
    f.write(json.dumps(head)[:-1] + ',\n "cases": [\n')
    f.write(",\n".join("  " + json.dumps(c) for c in CASES))
    f.write("\n ]\n}\n")
print("wrote %d cases" % len(CASES))
