#!/usr/bin/python3
"""Summarizes `make bench`: reads the Go benchmark output files and the
PyTorch JSON files written by compare.sh in pairs (go-REP-GROUP.txt beside
py-REP-GROUP-CONFIG.json), prints a table of medians and, per workload, the
median of the per-pair ratios Goluon/PyTorch with their minimum and
maximum, then one JSON line of the ratios ("KEY", "KEY_min", "KEY_max").

Throughput rows (samples/s, GFLOP/s) are higher-is-better and their ratio
is Goluon/PyTorch. The peak-RSS row (peak-RSS-MiB) is lower-is-better and
its ratio is PyTorch/Goluon, so that > 1 means Goluon is better on every
row. Per repetition the better PyTorch configuration counts: the higher
throughput, the lower peak RSS.

usage: summarize.py DIR   (DIR holds go-*.txt and py-*-*.json)
"""
import glob
import json
import os
import re
import statistics
import sys

# "BenchmarkName/sub-2   200   123 ns/op   45.6 unit   ..."
LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$")
# Units of the Go metrics that are compared, by preference when a line has
# several (BenchmarkTrainStepLeNetRSS also reports samples/s).
UNITS = ("peak-RSS-MiB", "us/op", "s/epoch", "GFLOP/s", "samples/s")
LOWER_IS_BETTER = {"peak-RSS-MiB", "us/op", "s/epoch"}
UNIT_LABEL = {"peak-RSS-MiB": "MiB (lower is better)", "us/op": "µs/op (lower is better)",
              "s/epoch": "s/epoch (lower is better)"}


def go_metrics(path):
    """Every metric of every benchmark line in a Go output file:
    {name (without Benchmark and -GOMAXPROCS): {unit: value}}."""
    out = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            fields = m.group(2).split()
            metrics = {}
            for i in range(0, len(fields) - 1, 2):
                try:
                    metrics[fields[i + 1]] = float(fields[i])
                except ValueError:
                    pass
            out[m.group(1)] = metrics
    return out


def go_results(path):
    """The compared metric of each benchmark: {name: (value, unit)}."""
    out = {}
    for name, metrics in go_metrics(path).items():
        for u in UNITS:
            if u in metrics:
                out[name] = (metrics[u], u)
                break
    return out


def value(v):
    """v with one decimal, or three significant digits below 10 (seconds)."""
    return "%.1f" % v if v >= 10 else "%.3g" % v


def natural(s):
    """Sort key that orders the numbers in names by value (n=128 < n=1024)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def main():
    d = sys.argv[1]
    # go-REP-GROUP.txt and py-REP-GROUP-CONFIG.json: one pair per repetition
    # and group, run back to back.
    go = {}     # workload -> ([values], unit)
    gorep = {}  # (rep, workload) -> value
    for p in sorted(glob.glob(os.path.join(d, "go-*.txt"))):
        rep = os.path.basename(p).split("-")[1]
        for w, (v, u) in go_results(p).items():
            go.setdefault(w, ([], u))[0].append(v)
            gorep[(rep, w)] = v
    reps = {}   # rep -> workload -> [value per PyTorch configuration]
    for p in sorted(glob.glob(os.path.join(d, "py-*.json"))):
        rep = os.path.basename(p).split("-")[1]
        try:
            with open(p) as f:
                data = json.loads(f.read().strip().splitlines()[-1])
        except (ValueError, IndexError):
            continue
        for w, v in data.items():
            reps.setdefault(rep, {}).setdefault(w, []).append(v)

    rows, ratios, inverted = [], {}, False
    for w in sorted(go, key=natural):
        vals, unit = go[w]
        lower = unit in LOWER_IS_BETTER
        base = re.sub(r"/(\d+ctx|eager|hybrid|compiled)$", "", w)
        best = {rep: (min if lower else max)(r[base]) for rep, r in reps.items() if base in r}
        pairs = []
        for rep, p in best.items():
            g = gorep.get((rep, w))
            if g and p:
                pairs.append(p / g if lower else g / p)
        g = statistics.median(vals)
        p = statistics.median(best.values()) if best else None
        rs = "n/a"
        if pairs:
            med = statistics.median(pairs)
            ratios[w], ratios[w + "_min"], ratios[w + "_max"] = round(med, 3), round(min(pairs), 3), round(max(pairs), 3)
            rs = "%.3f [%.2f-%.2f]" % (med, min(pairs), max(pairs))
        if lower:
            rs += " *"
            inverted = True
        rows.append((w, UNIT_LABEL.get(unit, unit), value(g), value(p) if p else "n/a", rs))
    head = ("workload", "unit", "Goluon median", "PyTorch median", "Goluon/PyTorch, per pair: median [min-max]")
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(5)]
    fmt = "  ".join(("%-" if i < 2 else "%") + str(widths[i]) + "s" for i in range(5))
    print(fmt % head)
    for row in rows:
        print(fmt % row)
    if inverted:
        print("* lower is better: the ratio is PyTorch/Goluon, so > 1 still means Goluon is better (less memory or time)")
    ratios.update(context_ratios(d))
    ratios.update(amp_ratios(d))
    ratios.update(hybrid_ratios(d))
    ratios.update(row_ratios(d, "/compiled", "/eager", "compiled step / eager", "/compiled_over_eager"))
    ratios.update(row_ratios(d, "/hybrid-fold", "/hybrid", "batch norm folded / hybridized", "/fold_over_hybrid"))
    print(json.dumps(ratios, sort_keys=True))
    peak_lines(d, go)
    handoff_lines(d)


def context_ratios(d):
    """Per workload with /1ctx and /2ctx rows: the median, minimum and
    maximum over the repetitions of 2ctx/1ctx throughput, printed and
    returned as KEY/2ctx_over_1ctx, _min and _max."""
    return row_ratios(d, "/2ctx", "/1ctx", "on 2 contexts / 1", "/2ctx_over_1ctx")


def hybrid_ratios(d):
    """Per workload with /eager and /hybrid rows (gluon.Hybridize): the
    median, minimum and maximum over the repetitions of hybrid/eager
    throughput, printed and returned as KEY/hybrid_over_eager."""
    return row_ratios(d, "/hybrid", "/eager", "hybridized / eager", "/hybrid_over_eager")


def row_ratios(d, row, ref, label, suffix):
    """The throughput of each workload's ROW over its REF row, one pair per
    go-*.txt (the two rows run back to back in one process): median,
    minimum and maximum over the repetitions, printed as "KEY LABEL" and
    returned as KEY+SUFFIX (and _min, _max)."""
    per = {}
    for p in sorted(glob.glob(os.path.join(d, "go-*.txt"))):
        res = go_results(p)
        for w, (v, u) in res.items():
            if w.endswith(row) and u == "samples/s":
                one = res.get(w[:-len(row)] + ref)
                if one and one[0]:
                    per.setdefault(w[:-len(row)], []).append(v / one[0])
    out = {}
    for w in sorted(per):
        vals = per[w]
        med = statistics.median(vals)
        print("%s %s: %.3f [%.3f-%.3f] over %d repetitions" % (w, label, med, min(vals), max(vals), len(vals)))
        key = w + suffix
        out[key], out[key + "_min"], out[key + "_max"] = round(med, 3), round(min(vals), 3), round(max(vals), 3)
    return out


def amp_ratios(d):
    """Per TrainStepAMP workload: the median, minimum and maximum over the
    repetitions of float16/float32 and bfloat16/float32 throughput and pool
    memory, each pair from one go-*.txt (the rows run back to back in one
    process), printed and returned as KEY/DT_over_float32 (and _min, _max)
    and KEY/DT_pool_over_float32."""
    per = {}
    for p in sorted(glob.glob(os.path.join(d, "go-*.txt"))):
        res = go_metrics(p)
        for w, m in res.items():
            for dt in ("float16", "bfloat16"):
                if not w.startswith("TrainStepAMP/") or not w.endswith("/" + dt):
                    continue
                base = w[: -len(dt)] + "float32"
                ref = res.get(base)
                if ref and ref.get("samples/s") and "samples/s" in m:
                    per.setdefault(w[:-len(dt)] + dt + "_over_float32", []).append(m["samples/s"] / ref["samples/s"])
                if ref and ref.get("pool-MiB") and "pool-MiB" in m:
                    per.setdefault(w[:-len(dt)] + dt + "_pool_over_float32", []).append(m["pool-MiB"] / ref["pool-MiB"])
    out = {}
    for key in sorted(per):
        vals = per[key]
        med = statistics.median(vals)
        print("%s: %.3f [%.3f-%.3f] over %d repetitions" % (key, med, min(vals), max(vals), len(vals)))
        out[key], out[key + "_min"], out[key + "_max"] = round(med, 3), round(min(vals), 3), round(max(vals), 3)
    return out


def fma_peak(d, name="fmapeak.txt"):
    """The best all-core GFLOP/s of bench/fmapeak's JSON line in d/name and
    its vector width, or None."""
    try:
        with open(os.path.join(d, name)) as f:
            data = json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None
    rows = data.get("results") or []
    if not rows:
        return None
    most = max(r["threads"] for r in rows)
    best = max((r for r in rows if r["threads"] == most), key=lambda r: r["gflops"])
    return best["gflops"], best["width"], most


def peak_lines(d, go):
    """Prints Goluon's matrix products as a share of the machine's measured
    FMA peak, and a JSON line of the same."""
    peak = fma_peak(d)
    if not peak:
        return
    gflops, width, threads = peak
    shares = {}
    for w in sorted(go, key=natural):
        vals, unit = go[w]
        if w.startswith("MatMul/") and unit == "GFLOP/s":
            shares[w] = round(statistics.median(vals) / gflops, 3)
    print("MatMul as a share of the measured FMA peak (%s, %d threads: %.1f GFLOP/s): %s" % (
        width, threads, gflops, ", ".join("%s %.0f%%" % (w.split("/", 1)[1], 100 * v) for w, v in shares.items())))
    out = {"fma_peak_gflops": round(gflops, 1), "fma_peak_width": width, "matmul_peak_share": shares}
    out.update(pair_peak_shares(d))
    print(json.dumps(out, sort_keys=True))


def pair_peak_shares(d):
    """Each repetition's matrix products against the FMA peak measured just
    before them (peak-REP-matmul.txt): prints, per size, the median share
    and its range, and the range of those peaks (a slow phase of the host
    lowers them), and returns them for the JSON line."""
    peaks = {}  # rep -> GFLOP/s
    for p in glob.glob(os.path.join(d, "peak-*-matmul.txt")):
        got = fma_peak(d, os.path.basename(p))
        if got:
            peaks[os.path.basename(p).split("-")[1]] = got[0]
    if not peaks:
        return {}
    shares = {}  # size -> [share per repetition]
    for p in glob.glob(os.path.join(d, "go-*-matmul.txt")):
        rep = os.path.basename(p).split("-")[1]
        if rep not in peaks:
            continue
        for w, (v, u) in go_results(p).items():
            if w.startswith("MatMul/") and u == "GFLOP/s":
                shares.setdefault(w, []).append(v / peaks[rep])
    out = {"pair_peak_gflops_min": round(min(peaks.values()), 1), "pair_peak_gflops_max": round(max(peaks.values()), 1)}
    parts = []
    for w in sorted(shares, key=natural):
        v = shares[w]
        out["pair_peak_share/" + w] = [round(statistics.median(v), 3), round(min(v), 3), round(max(v), 3)]
        parts.append("%s %.0f%% [%.0f-%.0f]" % (w.split("/", 1)[1], 100 * statistics.median(v), 100 * min(v), 100 * max(v)))
    print("MatMul as a share of each pair's own FMA peak (peaks %.1f-%.1f GFLOP/s): %s" % (
        min(peaks.values()), max(peaks.values()), ", ".join(parts)))
    return out


def slow_threshold(values):
    """Returns the round trip above which a probe is counted as the host's
    slow mode: the geometric mean of the two sorted probes with the largest
    ratio between them, when that ratio is at least 2 (the two modes of
    these VMs, about 100 and 550-700 ns, sit well apart), else None (every
    probe in one mode)."""
    v = sorted(values)
    best, at = 1.0, None
    for a, b in zip(v, v[1:]):
        if a > 0 and b / a > best:
            best, at = b / a, (a * b) ** 0.5
    return at if best >= 2 else None


def handoff_lines(d):
    """Prints the core-to-core round trip measured before and after each
    pair (handoff-REP-GROUP.json, two JSON lines of bench/fmapeak
    -handoff), per group, marks the pairs with a probe in the slow mode
    (slow_threshold: the host in its slow mode for part of the pair), and
    prints a JSON line {"handoff_ns": {group: [[before, after], ...]}}."""
    per = {}  # group -> {rep: [ns, ...]}
    for p in glob.glob(os.path.join(d, "handoff-*-*.json")):
        _, rep, group = os.path.basename(p)[:-len(".json")].split("-", 2)
        vals = []
        with open(p) as f:
            for line in f:
                try:
                    ns = json.loads(line).get("handoff_ns")
                except ValueError:
                    continue
                if isinstance(ns, (int, float)) and ns > 0:
                    vals.append(int(ns))
        if vals:
            per.setdefault(group, {})[rep] = vals
    if not per:
        return
    every = [v for g in per.values() for vals in g.values() for v in vals]
    cut = slow_threshold(every)
    slow, total = [], 0
    if cut is None:
        print("Core-to-core round trip before/after each pair (ns, bench/fmapeak -handoff); "
              "%d-%d ns, one mode throughout:" % (min(every), max(every)))
    else:
        print("Core-to-core round trip before/after each pair (ns, bench/fmapeak -handoff); "
              "* a probe in the slow mode (over %d ns; %d of %d probes):" % (
                  cut, sum(1 for v in every if v > cut), len(every)))
    for group in sorted(per):
        parts = []
        for rep in sorted(per[group], key=int):
            vals = per[group][rep]
            mark = "*" if cut is not None and max(vals) > cut else ""
            total += 1
            if mark:
                slow.append("%s/%s" % (group, rep))
            parts.append("rep %s %s%s" % (rep, "/".join(str(v) for v in vals), mark))
        print("  %-9s %s" % (group, "  ".join(parts)))
    print("%d of %d pairs ran with the slow round trip for part of the time%s" % (
        len(slow), total, (": " + ", ".join(slow)) if slow else ""))
    print(json.dumps({"handoff_ns": {g: [per[g][r] for r in sorted(per[g], key=int)] for g in sorted(per)}},
                     sort_keys=True))


if __name__ == "__main__":
    main()
