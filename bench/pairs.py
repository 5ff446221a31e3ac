#!/usr/bin/python3
"""Summarizes paired benchmark runs: for each repetition R and workload W,
DIR holds go-R-W.txt (Go benchmark output) and py-R-W.json (the PyTorch
side's JSON line, keyed by the Go benchmark names), run back to back. Each
pair gives one ratio, and the table reports the median of the per-pair
ratios with their minimum and maximum, so that a slow phase of the machine
moves one pair, not the figure. Ratios are Goluon/PyTorch for throughputs
(samples/s) and PyTorch/Goluon for times (us/op): > 1 means Goluon is
better.

Rows whose names end in /4gpu (the same workload on 4 virtual GPUs) are
compared with the /gpu0 row of the same Go run: KEY_4v_over_1 is the
median of 4gpu/gpu0 throughput over the repetitions. Go metrics syncs/step,
calls/step and copies/step are reported as medians.

Prints the table, then one JSON line: "KEY": median, "KEY_min", "KEY_max".

usage: pairs.py DIR
"""
import glob
import json
import os
import statistics
import sys

from summarize import go_metrics

UNITS = ("us/op", "samples/s")
EXTRA = ("syncs/step", "calls/step", "copies/step")
SHORT = {"TrainStepLeNetGPU": "lenet", "TrainStepKerasCIFARGPU": "cifar", "TrainStepMLPGPU": "mlp"}


def spread(vals):
    return statistics.median(vals), min(vals), max(vals)


def main():
    d = sys.argv[1]
    pairs, scale, extra, gov, pyv = {}, {}, {}, {}, {}
    for p in sorted(glob.glob(os.path.join(d, "go-*.txt"))):
        rep, w = os.path.basename(p)[3:-4].split("-", 1)
        go = go_metrics(p)
        py = {}
        try:
            with open(os.path.join(d, "py-%s-%s.json" % (rep, w))) as f:
                py = json.loads(f.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            pass
        for key, m in go.items():
            for u in EXTRA:
                if u in m:
                    extra.setdefault((key, u), []).append(m[u])
            unit = next((u for u in UNITS if u in m), None)
            if unit is None:
                continue
            g = m[unit]
            gov.setdefault(key, []).append(g)
            if key in py and py[key] and g:
                pyv.setdefault(key, []).append(py[key])
                pairs.setdefault(key, []).append(py[key] / g if unit == "us/op" else g / py[key])
            if key.endswith("/4gpu"):
                one = go.get(key[:-5] + "/gpu0", {}).get(unit)
                if one:
                    scale.setdefault(key[:-5], []).append(g / one)
    out = {}
    print("%-30s %14s %14s %22s" % ("workload", "Goluon median", "PyTorch median", "ratio median [min-max]"))
    for key in sorted(gov):
        g = statistics.median(gov[key])
        p = statistics.median(pyv[key]) if key in pyv else None
        r = ""
        if key in pairs:
            med, lo, hi = spread(pairs[key])
            r = "%.2f [%.2f-%.2f] n=%d" % (med, lo, hi, len(pairs[key]))
            out[key], out[key + "_min"], out[key + "_max"] = round(med, 3), round(lo, 3), round(hi, 3)
        print("%-30s %14.1f %14s %22s" % (key, g, "%.1f" % p if p else "n/a", r))
    if scale:
        print("\n%-30s %22s" % ("4 virtual GPUs / 1 GPU", "median [min-max]"))
    for key in sorted(scale):
        med, lo, hi = spread(scale[key])
        name = SHORT.get(key, key) + "_4v_over_1"
        print("%-30s %.2f [%.2f-%.2f] n=%d" % (key, med, lo, hi, len(scale[key])))
        out[name], out[name + "_min"], out[name + "_max"] = round(med, 3), round(lo, 3), round(hi, 3)
    if extra:
        print("\n%-30s %12s %8s" % ("per step (all contexts)", "metric", "median"))
    for (key, u) in sorted(extra):
        print("%-30s %12s %8.1f" % (key, u, statistics.median(extra[(key, u)])))
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
