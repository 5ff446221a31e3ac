#!/usr/bin/env bash
# make bench-noise: runs make bench's pairs twice (bench/compare.sh, same
# REPS, SCALE and ONLY) and prints, per workload, the two medians of the
# per-pair ratios and how far apart they are. On a quiet machine every row
# agrees within 10%; rows that do not are marked, and their ratios should
# be quoted with that spread.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out/a" "$out/b"
KEEP="$out/a" bash bench/compare.sh | tee "$out/a.txt"
KEEP="$out/b" bash bench/compare.sh | tee "$out/b.txt"
/usr/bin/python3 - "$out/a.txt" "$out/b.txt" <<'PY'
import json, sys

def ratios(path):
    for line in open(path):
        if line.startswith("{") and "fma_peak" not in line:
            return json.loads(line)
    return {}

a, b = ratios(sys.argv[1]), ratios(sys.argv[2])
keys = [k for k in sorted(a) if k in b and not k.endswith(("_min", "_max"))]
print("%-40s %8s %8s %8s" % ("workload", "run 1", "run 2", "differ"))
bad = 0
for k in keys:
    d = abs(a[k] - b[k]) / max(min(a[k], b[k]), 1e-9)
    mark = "" if d <= 0.10 else "  > 10%"
    bad += d > 0.10
    print("%-40s %8.3f %8.3f %7.1f%%%s" % (k, a[k], b[k], 100 * d, mark))
print("%d of %d rows differ by more than 10%% between the two runs" % (bad, len(keys)))
PY
