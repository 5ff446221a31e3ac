#!/usr/bin/python3
"""Writes goldens_sched.json: the learning rates of PyTorch's OneCycleLR,
CosineAnnealingWarmRestarts, CyclicLR and ReduceLROnPlateau, for the Go
schedules of scheduler_cycle.go.

Run:  /usr/bin/python3 make_goldens_sched.py   (Debian's python3-torch)

Each case records the rate of every optimizer step: entry n−1 is the rate
of update n (after n−1 calls of the scheduler's step()). Plateau cases
also record the metric given to step(metric) after each update.
"""
import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def run(make, steps, metrics=None):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.5, momentum=0.9)
    sched = make(opt)
    lrs = []
    for n in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[n])
    return lrs


def main():
    S = torch.optim.lr_scheduler
    cases = []

    def add(name, kind, cfg, make, steps, metrics=None):
        enc = None if metrics is None else [None if math.isnan(m) else m for m in metrics]  # null: NaN
        cases.append({"name": name, "kind": kind, "config": cfg,
                      "lrs": run(make, steps, metrics), "metrics": enc})

    for cfg in [
        {"max_lr": 0.1, "total_steps": 100},
        {"max_lr": 2.0, "total_steps": 37, "pct_start": 0.25, "div_factor": 10, "final_div_factor": 100, "anneal": "linear"},
        {"max_lr": 0.5, "total_steps": 50, "three_phase": True},
        {"max_lr": 0.5, "total_steps": 23, "three_phase": True, "anneal": "linear", "pct_start": 0.4},
    ]:
        kw = dict(cfg)
        kw["anneal_strategy"] = kw.pop("anneal", "cos")
        add("onecycle-%d" % len(cases), "onecycle", cfg,
            lambda o, kw=kw: S.OneCycleLR(o, cycle_momentum=False, **kw), cfg["total_steps"])
    for cfg in [{"t0": 10, "mult": 1, "min_lr": 0.0}, {"t0": 3, "mult": 2, "min_lr": 0.01}, {"t0": 1, "mult": 3, "min_lr": 0.1}]:
        add("warmrestarts-%d" % len(cases), "warmrestarts", cfg,
            lambda o, c=cfg: S.CosineAnnealingWarmRestarts(o, T_0=c["t0"], T_mult=c["mult"], eta_min=c["min_lr"]), 60)
    for cfg in [
        {"base_lr": 0.01, "max_lr": 0.1, "up": 5, "down": 0, "mode": "triangular"},
        {"base_lr": 0.01, "max_lr": 0.1, "up": 4, "down": 7, "mode": "triangular2"},
        {"base_lr": 0.001, "max_lr": 0.3, "up": 6, "down": 3, "mode": "exp_range", "gamma": 0.97},
    ]:
        add("cyclic-%d" % len(cases), "cyclic", cfg,
            lambda o, c=cfg: S.CyclicLR(o, base_lr=c["base_lr"], max_lr=c["max_lr"], step_size_up=c["up"],
                                        step_size_down=c["down"] or None, mode=c["mode"],
                                        gamma=c.get("gamma", 1.0), cycle_momentum=False), 40)
    loss = [1.0, 0.9, 0.95, 0.9, 0.91, 0.92, 0.93, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.49995, 0.6, 0.6, 0.6, 0.6, 0.6]
    acc = [0.1, 0.2, 0.2, 0.25, 0.25, 0.25, float("nan"), 0.3, 0.3, 0.3, 0.3, 0.31, 0.3, 0.3, 0.3, 0.3]
    for cfg, metrics in [
        ({"lr": 1.0, "patience": 2}, loss),
        ({"lr": 1.0, "patience": 1, "cooldown": 2, "factor": 0.5, "min_lr": 0.2}, loss),
        ({"lr": 0.3, "patience": 0, "threshold": 0.05, "abs": True}, loss),
        ({"lr": 1.0, "patience": 1, "maximize": True}, acc),
        ({"lr": 1.0, "patience": 1, "maximize": True, "abs": True, "threshold": 0.02, "eps": 0.3, "factor": 0.8}, acc),
    ]:
        kw = {"mode": "max" if cfg.get("maximize") else "min", "factor": cfg.get("factor", 0.1),
              "patience": cfg["patience"], "threshold": cfg.get("threshold", 1e-4),
              "threshold_mode": "abs" if cfg.get("abs") else "rel", "cooldown": cfg.get("cooldown", 0),
              "min_lr": cfg.get("min_lr", 0.0), "eps": cfg.get("eps", 1e-8)}

        def make(o, kw=kw, lr=cfg["lr"]):
            for g in o.param_groups:
                g["lr"] = lr
            return S.ReduceLROnPlateau(o, **kw)
        add("plateau-%d" % len(cases), "plateau", cfg, make, len(metrics), metrics)
    # LinearLR, and SequentialLR of a warm-up and a decay (schedule_compose.go);
    # the optimizer's lr is 0.5.
    for cfg in [{"start": 1 / 3, "end": 1.0, "total": 5}, {"start": 1.0, "end": 0.05, "total": 12}]:
        add("linear-%d" % len(cases), "linear", cfg,
            lambda o, c=cfg: S.LinearLR(o, start_factor=c["start"], end_factor=c["end"], total_iters=c["total"]), 20)
    cfg = {"warm": 4, "decay": 10}
    add("sequential-%d" % len(cases), "sequential", cfg,
        lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=4),
                                     S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10)], milestones=[4]), 20)
    path = os.path.join(HERE, "goldens_sched.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_goldens_sched.py, torch " + torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases to", path)


if __name__ == "__main__":
    main()
