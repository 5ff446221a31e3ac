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

Rows with a short name (ALIAS: ResNet-50's, resnet50_train and
resnet50_infer) get their ratios under that name too.

Variants of one workload (BASE/eager, BASE/hybrid, BASE/cudagraph, ...)
whose PyTorch side has only BASE are paired with BASE, and every variant is
also compared with BASE/eager of the same Go run: KEY_over_eager is the
median of its throughput over eager's.

TF32: a Go benchmark's cudnn-tf32 metric (whether GOLUON_CUDNN_TF32 was
on) and the TF32 settings in the JSON line that the PyTorch side printed to
its standard error, kept as py-R-W.err (gpu_compare.sh keeps it for
resnet50), are printed per workload W and go into the JSON line as
W_goluon_cudnn_tf32, W_pytorch_cudnn_tf32 and W_pytorch_matmul_tf32: 1 or
0, or "mixed" when the repetitions differ.

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
ALIAS = {"TrainStepResNet50GPU/gpu0": "resnet50_train", "InferResNet50GPU": "resnet50_infer"}
TF32 = (("goluon_cudnn_tf32", "Goluon cuDNN"), ("pytorch_cudnn_tf32", "PyTorch cuDNN"),
        ("pytorch_matmul_tf32", "PyTorch matmul"))


def spread(vals):
    return statistics.median(vals), min(vals), max(vals)


def py_info(path):
    """The last JSON object in the PyTorch side's standard error (its device,
    versions and TF32 settings), or {}."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    for line in reversed(lines):
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict):
            return v
    return {}


def agreed(vals):
    """1 or 0 when every repetition says the same, else "mixed"."""
    vals = set(int(bool(v)) for v in vals)
    return vals.pop() if len(vals) == 1 else "mixed"


def main():
    d = sys.argv[1]
    pairs, scale, extra, gov, pyv, tf32, over = {}, {}, {}, {}, {}, {}, {}
    for p in sorted(glob.glob(os.path.join(d, "go-*.txt"))):
        rep, w = os.path.basename(p)[3:-4].split("-", 1)
        go = go_metrics(p)
        py = {}
        try:
            with open(os.path.join(d, "py-%s-%s.json" % (rep, w))) as f:
                py = json.loads(f.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            pass
        info = py_info(os.path.join(d, "py-%s-%s.err" % (rep, w)))
        for name, v in (("pytorch_cudnn_tf32", info.get("cudnn_tf32")),
                        ("pytorch_matmul_tf32", info.get("matmul_tf32"))):
            if v is not None:
                tf32.setdefault((w, name), []).append(v)
        for key, m in go.items():
            for u in EXTRA:
                if u in m:
                    extra.setdefault((key, u), []).append(m[u])
            if "cudnn-tf32" in m:
                tf32.setdefault((w, "goluon_cudnn_tf32"), []).append(m["cudnn-tf32"])
            unit = next((u for u in UNITS if u in m), None)
            if unit is None:
                continue
            g = m[unit]
            gov.setdefault(key, []).append(g)
            pk = key if key in py else key.split("/")[0]  # a variant against PyTorch's one row
            if pk in py and py[pk] and g:
                pyv.setdefault(key, []).append(py[pk])
                pairs.setdefault(key, []).append(py[pk] / g if unit == "us/op" else g / py[pk])
            base, _, variant = key.partition("/")
            eager = go.get(base + "/eager", {}).get(unit)
            if variant and variant != "eager" and eager and g:
                over.setdefault(key, []).append(eager / g if unit == "us/op" else g / eager)
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
            for k in (key, ALIAS.get(key)):
                if k:
                    out[k], out[k + "_min"], out[k + "_max"] = round(med, 3), round(lo, 3), round(hi, 3)
        print("%-30s %14.1f %14s %22s" % (key, g, "%.1f" % p if p else "n/a", r))
    if scale:
        print("\n%-30s %22s" % ("4 virtual GPUs / 1 GPU", "median [min-max]"))
    for key in sorted(scale):
        med, lo, hi = spread(scale[key])
        name = SHORT.get(key, key) + "_4v_over_1"
        print("%-30s %.2f [%.2f-%.2f] n=%d" % (key, med, lo, hi, len(scale[key])))
        out[name], out[name + "_min"], out[name + "_max"] = round(med, 3), round(lo, 3), round(hi, 3)
    if over:
        print("\n%-30s %22s" % ("against eager Goluon", "median [min-max]"))
    for key in sorted(over):
        med, lo, hi = spread(over[key])
        print("%-30s %.2f [%.2f-%.2f] n=%d" % (key, med, lo, hi, len(over[key])))
        out[key + "_over_eager"], out[key + "_over_eager_min"], out[key + "_over_eager_max"] = round(med, 3), round(lo, 3), round(hi, 3)
    if extra:
        print("\n%-30s %12s %8s" % ("per step (all contexts)", "metric", "median"))
    for (key, u) in sorted(extra):
        print("%-30s %12s %8.1f" % (key, u, statistics.median(extra[(key, u)])))
    works = sorted(set(w for w, _ in tf32))
    if works:
        print("\n%-30s %14s %14s %14s" % (("TF32 allowed (1 yes, 0 no)",) + tuple(t for _, t in TF32)))
    for w in works:
        row = []
        for name, _ in TF32:
            v = agreed(tf32[(w, name)]) if (w, name) in tf32 else None
            if v is not None:
                out[w + "_" + name] = v
            row.append("n/a" if v is None else str(v))
        print("%-30s %14s %14s %14s" % tuple([w] + row))
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
