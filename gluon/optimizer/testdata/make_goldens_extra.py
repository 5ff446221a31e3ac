#!/usr/bin/python3
"""Writes goldens_extra.json for golden_extra_test.go: several update steps
of the rules added after goldens.json (Adamax, Nadam, RAdam, AdaDelta, FTRL,
LAMB, LARS, Signum/signSGD, and Adam/AdamW with AMSGrad).

Run with Debian's python3 and torch 1.13, from this directory:

    /usr/bin/python3 make_goldens_extra.py

Three tensors with the names a Trainer would pass (a weight matrix, its bias,
another weight) start from fixed values and get a fixed sequence of
gradients, in float64; every case updates each of them with its own state.
The names matter to LARS, which leaves "...bias" parameters unscaled, and
the per-tensor norms to LAMB and LARS. A case's "source" says where its
expected weights come from:

  "torch"    torch.optim, for the rules it has, with settings under which its
             rule is the one the Go code implements:
               Adamax                  as is (the Go default keeps torch's eps)
               NAdam                   foreach=True: torch 1.13's default
                                       single-tensor path multiplies mu_t twice
                                       into mu_product_next (fixed later,
                                       pytorch/pytorch#92699); the foreach
                                       path is the rule
               RAdam                   as is
               Adadelta                compared with the Go TorchForm
               Adam, amsgrad=True      eps = 0 (torch adds eps to
                                       sqrt(v)/sqrt(1-beta2^t), MXNet's Adam,
                                       the Go Adam, to sqrt(v))
               AdamW, amsgrad=True     as is
  "mxnet"    MXNet's update equations (python/mxnet/optimizer and the
             optimizer_op kernels' documented formulas) written out below
             with torch tensors, for the rules torch lacks (FTRL, LAMB, LARS,
             Signum) and for the MXNet 1.x forms and the settings torch has
             no knob for (rescale_grad, clip_gradient, lr_mult, wd_mult):
             Adamax without eps, Nadam, AdaDelta's 1.x form.
  "formula"  RAdam, which MXNet 1.x lacks, with rescale_grad and
             clip_gradient applied in MXNet 2.x's order.

Each case lists its settings under "params"; "lrs" (when present) is the
base learning rate of each step (a schedule; LARS's momentum correction
reads the ratio of consecutive ones).
"""
import json
import math

import torch

torch.set_default_dtype(torch.float64)
STEPS = 8
TENSORS = [("dense0.weight", [3, 4]), ("dense0.bias", [4]), ("conv0.weight", [2, 3])]


def fixed(seed, shape, lo, hi):
    g = torch.Generator().manual_seed(seed)
    x = lo + (hi - lo) * torch.rand(shape, generator=g)
    return [round(v, 4) + 0.0 for v in x.flatten().tolist()]  # + 0.0: no -0.0


DATA = []
for k, (name, shape) in enumerate(TENSORS):
    w0 = fixed(10 + k, shape, -1.0, 1.0)
    grads = []
    for s in range(STEPS):
        # Mixed sign and size, none near 0 (Adamax without eps divides by |g|).
        # The third tensor's gradients shrink: AMSGrad's maximum then differs
        # from v, and Signum's momentum changes sign.
        scale = 1.0 if k < 2 else 2.0 ** -s
        g = fixed(1000 * (k + 1) + s, shape, -1.5, 1.5)
        grads.append([round(scale * (v if abs(v) > 0.05 else 0.05), 6) for v in g])
    DATA.append({"name": name, "shape": shape, "w0": w0, "grads": grads})


def t(v, shape):
    return torch.tensor(v).reshape(shape)


def run_torch(make_opt, lrs=None):
    ps = [torch.nn.Parameter(t(d["w0"], d["shape"]).clone()) for d in DATA]
    opt = make_opt(ps)
    out = {d["name"]: [] for d in DATA}
    for s in range(STEPS):
        if lrs is not None:
            for grp in opt.param_groups:
                grp["lr"] = lrs[s]
        for p, d in zip(ps, DATA):
            p.grad = t(d["grads"][s], d["shape"]).clone()
        opt.step()
        for p, d in zip(ps, DATA):
            out[d["name"]].append(p.detach().flatten().tolist())
    return out


def clip(g, c):
    return g.clamp(-c, c) if c > 0 else g


def nadam_mu(b1, psi, n):
    return b1 * (1 - 0.5 * 0.96 ** (n * psi))


def step_rule(rule, pr, name, w, g, st, n, lr, base_lrs):
    """One update of MXNet's (or, for radam, the documented) rule; returns w."""
    rescale, c = pr.get("rescale", 1.0), pr.get("clip", 0.0)
    wd = pr.get("wd", 0.0) * pr.get("wd_mult", 1.0)
    b1, b2, eps = pr.get("beta1", 0.0), pr.get("beta2", 0.0), pr.get("eps", 0.0)
    if rule == "adamax":  # Adamax.update (1.x): no eps when pr["eps"] == 0
        gg = clip(rescale * g + wd * w, c)
        st[0] = b1 * st[0] + (1 - b1) * gg
        st[1] = torch.maximum(b2 * st[1], gg.abs() + eps)
        return w - lr / (1 - b1 ** n) * st[0] / st[1]
    if rule == "nadam":  # Nadam.update, the schedule product kept per parameter
        gg = clip(rescale * g + wd * w, c)
        psi = pr["schedule_decay"]
        mu_t, mu_next = nadam_mu(b1, psi, n), nadam_mu(b1, psi, n + 1)
        st[2] = st[2] * mu_t  # the product, a 0-d tensor starting at 1
        st[0] = b1 * st[0] + (1 - b1) * gg
        st[1] = b2 * st[1] + (1 - b2) * gg * gg
        m_bar = ((1 - mu_t) * gg / (1 - st[2])
                 + mu_next * st[0] / (1 - st[2] * mu_next))
        return w - lr * m_bar / ((st[1] / (1 - b2 ** n)).sqrt() + eps)
    if rule == "adadelta":  # AdaDelta.update (1.x): no learning rate, wd apart
        rho = pr["rho"]
        gg = clip(rescale * g, c)
        st[0] = rho * st[0] + (1 - rho) * gg * gg
        delta = (st[1] + eps).sqrt() / (st[0] + eps).sqrt() * gg
        st[1] = rho * st[1] + (1 - rho) * delta * delta
        return w - (delta + wd * w)
    if rule == "ftrl":  # ftrl_update
        l1, beta = pr["lamda1"], pr["beta"]
        gg = clip(rescale * g, c)
        st[0] = st[0] + gg - ((st[1] + gg * gg).sqrt() - st[1].sqrt()) * w / lr
        st[1] = st[1] + gg * gg
        new = (torch.sign(st[0]) * l1 - st[0]) / ((beta + st[1].sqrt()) / lr + wd)
        return torch.where(st[0].abs() > l1, new, torch.zeros_like(new))
    if rule == "signum":  # signum_update, momentum > 0
        mom, wd_lh = pr["momentum"], pr.get("wd_lh", 0.0)
        # The kernel's buffer accumulates -(g + wd*w); its sign steps the weight up.
        st[0] = mom * st[0] - (1 - mom) * wd * w - (1 - mom) * clip(rescale * g, c)
        return (1 - lr * wd_lh) * w + lr * torch.sign(st[0])
    if rule == "signsgd":  # Signum.step without momentum (MXNet 2.x: wd + wd_lh)
        decay = wd + pr.get("wd_lh", 0.0)
        return (1 - lr * decay) * w - lr * torch.sign(g)
    if rule == "lamb":  # lamb_update_phase1 and lamb_update_phase2
        gg = clip(rescale * g, c)
        st[0] = b1 * st[0] + (1 - b1) * gg
        st[1] = b2 * st[1] + (1 - b2) * gg * gg
        if pr.get("no_bias_correction"):
            upd = st[0] / (st[1].sqrt() + eps) + wd * w
        else:
            m_hat, v_hat = st[0] / (1 - b1 ** n), st[1] / (1 - b2 ** n)
            upd = m_hat / (v_hat.sqrt() + eps) + wd * w
        r1, r2 = float(w.norm()), float(upd.norm())
        if pr.get("lower_bound", 0) > 0:
            r1 = max(r1, pr["lower_bound"])
        if pr.get("upper_bound", 0) > 0:
            r1 = min(r1, pr["upper_bound"])
        ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
        return w - lr * ratio * upd
    if rule == "lars":  # LARS._get_lars, then sgd_mom_update / sgd_update
        eta, lars_eps, mom = pr["eta"], pr.get("eps", 0.0), pr.get("momentum", 0.0)
        lars = 1.0
        if not (name.endswith("gamma") or name.endswith("beta") or name.endswith("bias")):
            w_norm, g_norm = float(w.norm()), float((g * rescale).norm())
            if w_norm > 0 and g_norm > 0:
                lars = eta * w_norm / (g_norm + wd * w_norm + lars_eps)
        lr_layer = lr * lars
        step = lr_layer * (clip(rescale * g, c) + wd * w)
        if mom == 0:
            return w - step
        corr = 1.0
        if not pr.get("no_momentum_correction") and n > 1 and base_lrs[n - 2] != 0:
            corr = base_lrs[n - 1] / base_lrs[n - 2]
        st[0] = mom * corr * st[0] - step
        return w + st[0]
    if rule == "radam":  # torch's RAdam, the gradient prepared as MXNet 2.x's radam
        gg = clip(rescale * g, c) + wd * w
        st[0] = b1 * st[0] + (1 - b1) * gg
        st[1] = b2 * st[1] + (1 - b2) * gg * gg
        bc1, bc2 = 1 - b1 ** n, 1 - b2 ** n
        m_hat = st[0] / bc1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * n * b2 ** n / bc2
        if rho_t > 5:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            return w - lr * rect * m_hat * math.sqrt(bc2) / (st[1].sqrt() + eps)
        return w - lr * m_hat
    raise ValueError(rule)


def run_formula(rule, pr, lrs):
    out = {}
    for d in DATA:
        w = t(d["w0"], d["shape"]).clone()
        st = [torch.zeros(d["shape"]), torch.zeros(d["shape"]), torch.tensor(1.0)]
        ws = []
        for s in range(STEPS):
            lr = lrs[s] * pr.get("lr_mult", 1.0)
            w = step_rule(rule, pr, d["name"], w, t(d["grads"][s], d["shape"]), st, s + 1, lr, lrs)
            ws.append(w.flatten().tolist())
        out[d["name"]] = ws
    return out


CASES = []


def case(name, source, opt, params, weights, lrs=None, note=""):
    c = {"name": name, "source": source, "optimizer": opt, "params": params, "weights": weights}
    if lrs is not None:
        c["lrs"] = lrs
    if note:
        c["note"] = note
    CASES.append(c)


O = torch.optim
CONST = [0.05] * STEPS
SCHED = [0.05, 0.02, 0.08, 0.04, 0.1, 0.03, 0.06, 0.05]

# ---- torch.optim ----
case("adamax_wd", "torch", "adamax", {"lr": 0.05, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.05},
     run_torch(lambda ps: O.Adamax(ps, lr=0.05, weight_decay=0.05)))
case("adamax_betas_eps_lr_changing", "torch", "adamax", {"beta1": 0.8, "beta2": 0.95, "eps": 1e-3},
     run_torch(lambda ps: O.Adamax(ps, lr=0.1, betas=(0.8, 0.95), eps=1e-3), SCHED), lrs=SCHED)
case("nadam_wd", "torch", "nadam",
     {"lr": 0.05, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "schedule_decay": 0.004, "wd": 0.05},
     run_torch(lambda ps: O.NAdam(ps, lr=0.05, weight_decay=0.05, foreach=True)))
case("nadam_decay_betas_lr_changing", "torch", "nadam",
     {"beta1": 0.8, "beta2": 0.9, "eps": 1e-3, "schedule_decay": 0.05},
     run_torch(lambda ps: O.NAdam(ps, lr=0.1, betas=(0.8, 0.9), eps=1e-3, momentum_decay=0.05,
                                  foreach=True), SCHED), lrs=SCHED)
case("radam_wd", "torch", "radam", {"lr": 0.05, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.05},
     run_torch(lambda ps: O.RAdam(ps, lr=0.05, weight_decay=0.05)),
     note="rho_t stays <= 5 for 8 steps: the unrectified branch")
case("radam_rectified", "torch", "radam", {"beta1": 0.9, "beta2": 0.9, "eps": 1e-3, "wd": 0.02},
     run_torch(lambda ps: O.RAdam(ps, lr=0.1, betas=(0.9, 0.9), eps=1e-3, weight_decay=0.02), SCHED),
     lrs=SCHED, note="beta2 0.9: rectified from step 6")
case("adadelta_torchform_wd", "torch", "adadelta",
     {"lr": 1.0, "rho": 0.9, "eps": 1e-6, "wd": 0.05, "torch_form": True},
     run_torch(lambda ps: O.Adadelta(ps, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.05)))
case("adadelta_torchform_lr_changing", "torch", "adadelta",
     {"rho": 0.8, "eps": 1e-3, "torch_form": True},
     run_torch(lambda ps: O.Adadelta(ps, lr=1.0, rho=0.8, eps=1e-3), SCHED), lrs=SCHED)
case("adam_amsgrad_eps0_wd", "torch", "adam",
     {"lr": 0.05, "beta1": 0.9, "beta2": 0.9, "eps": 0.0, "wd": 0.05, "amsgrad": True},
     run_torch(lambda ps: O.Adam(ps, lr=0.05, betas=(0.9, 0.9), eps=0.0, weight_decay=0.05,
                                 amsgrad=True)))
case("adamw_amsgrad", "torch", "adamw",
     {"lr": 0.05, "beta1": 0.8, "beta2": 0.9, "eps": 1e-8, "wd": 0.1, "amsgrad": True},
     run_torch(lambda ps: O.AdamW(ps, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)))


# ---- MXNet's equations (and RAdam's with MXNet 2.x's preparation) ----
def mx(name, rule, params, lrs=CONST, source="mxnet", note=""):
    p = dict(params)
    if lrs is CONST:
        p["lr"] = CONST[0]
    case(name, source, rule, p, run_formula(rule, p, lrs), lrs=None if lrs is CONST else lrs, note=note)


mx("adamax_no_eps_rescale_clip", "adamax",
   {"beta1": 0.9, "beta2": 0.999, "eps": 0.0, "wd": 0.1, "rescale": 0.5, "clip": 0.4, "lr_mult": 2.0},
   note="MXNet's Adamax has no eps: u = max(beta2*u, |g|)")
mx("nadam_rescale_clip_mults", "nadam",
   {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "schedule_decay": 0.004, "wd": 0.1, "rescale": 0.5,
    "clip": 0.4, "wd_mult": 2.0}, SCHED)
mx("adadelta_mxnet_wd_rescale_clip", "adadelta",
   {"rho": 0.9, "eps": 1e-5, "wd": 0.05, "rescale": 2.0, "clip": 1.0}, SCHED,
   note="MXNet 1.x's AdaDelta ignores the learning rate (the schedule here)")
mx("ftrl_default", "ftrl", {"lamda1": 0.01, "beta": 1.0})
mx("ftrl_l1_wd_rescale_clip", "ftrl",
   {"lamda1": 0.8, "beta": 0.5, "wd": 0.1, "rescale": 0.5, "clip": 0.6, "lr_mult": 2.0}, SCHED,
   note="lamda1 large enough to zero some elements")
mx("signum_wd_lh_rescale_clip", "signum",
   {"momentum": 0.9, "wd": 0.05, "wd_lh": 0.1, "rescale": 0.5, "clip": 0.3}, SCHED)
mx("signum_low_momentum", "signum", {"momentum": 0.5, "wd": 0.02})
mx("signsgd_wd_wd_lh", "signsgd", {"wd": 0.05, "wd_lh": 0.1, "rescale": 0.5, "wd_mult": 2.0}, SCHED)
mx("lamb_default", "lamb", {"beta1": 0.9, "beta2": 0.999, "eps": 1e-6})
mx("lamb_wd_rescale_clip", "lamb",
   {"beta1": 0.9, "beta2": 0.999, "eps": 1e-6, "wd": 0.1, "rescale": 0.5, "clip": 0.4, "lr_mult": 2.0},
   SCHED)
mx("lamb_no_bias_correction_bounds", "lamb",
   {"beta1": 0.8, "beta2": 0.9, "eps": 1e-6, "wd": 0.01, "no_bias_correction": True,
    "lower_bound": 1.2, "upper_bound": 1.35},
   note="the bounds bite: one tensor's norm starts below 1.2, one above 1.35")
mx("lars_momentum_correction", "lars",
   {"momentum": 0.9, "eta": 0.01, "eps": 1e-6, "wd": 0.05, "rescale": 0.5, "clip": 0.3}, SCHED,
   note="dense0.bias keeps the plain rate; the momentum follows the schedule's ratio")
mx("lars_no_momentum_correction", "lars",
   {"momentum": 0.9, "eta": 0.02, "wd": 0.01, "no_momentum_correction": True}, SCHED)
mx("lars_no_momentum", "lars", {"eta": 0.001, "wd": 0.05, "lr_mult": 3.0, "wd_mult": 0.5})
mx("radam_rescale_clip", "radam",
   {"beta1": 0.9, "beta2": 0.9, "eps": 1e-8, "wd": 0.05, "rescale": 0.5, "clip": 0.4}, SCHED,
   source="formula")

# The settings above are needed: torch 1.13's default NAdam differs.
single = run_torch(lambda ps: O.NAdam(ps, lr=0.05, weight_decay=0.05))
diff = abs(single["dense0.weight"][-1][0] - CASES[2]["weights"]["dense0.weight"][-1][0])
assert CASES[2]["name"] == "nadam_wd" and diff > 1e-6, diff
# The bounds and FTRL's threshold do something in their cases.
norms = [float(t(d["w0"], d["shape"]).norm()) for d in DATA]
assert min(norms) < 1.2 and max(norms) > 1.35 and any(1.2 < x < 1.35 for x in norms), norms
ftrl = [c for c in CASES if c["name"] == "ftrl_l1_wd_rescale_clip"][0]
assert any(v == 0 for ws in ftrl["weights"].values() for v in ws[-1]), "no element zeroed"
assert any(v != 0 for ws in ftrl["weights"].values() for v in ws[-1]), "all elements zeroed"
# AMSGrad's maximum and LARS's momentum correction change the weights.
plain = run_torch(lambda ps: O.Adam(ps, lr=0.05, betas=(0.9, 0.9), eps=0.0, weight_decay=0.05))
ams = [c for c in CASES if c["name"] == "adam_amsgrad_eps0_wd"][0]["weights"]
assert abs(plain["conv0.weight"][-1][0] - ams["conv0.weight"][-1][0]) > 1e-6
corrected = [c for c in CASES if c["name"] == "lars_momentum_correction"][0]
uncorrected = run_formula("lars", dict(corrected["params"], no_momentum_correction=True), SCHED)
assert abs(uncorrected["dense0.weight"][-1][0] - corrected["weights"]["dense0.weight"][-1][0]) > 1e-6

head = {"generator": "make_goldens_extra.py (torch %s, float64)" % torch.__version__,
        "steps": STEPS, "tensors": DATA}
with open("goldens_extra.json", "w") as f:  # one case a line: small, diffable
    f.write(json.dumps(head)[:-1] + ',\n "cases": [\n')
    f.write(",\n".join("  " + json.dumps(c) for c in CASES))
    f.write("\n ]\n}\n")
print("wrote %d cases" % len(CASES))
