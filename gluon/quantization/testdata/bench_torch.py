#!/usr/bin/python3
"""Alternating timing of Goluon's int8 Dense against PyTorch's dynamic
quantized Linear (and both float32 layers), on the shapes of
BenchmarkDense: square 512 and 1024 layers at batch 1, 32 and 128.

    go test -c -o /tmp/q.test ./gluon/quantization
    /usr/bin/python3 gluon/quantization/testdata/bench_torch.py /tmp/q.test [rounds] [threads]

Each round times every configuration once on each side, for about
0.05 s a side (Go: BenchmarkDense with -test.benchtime 0.05s; torch: a
loop of calls after a warm-up), the side that goes first alternating
between rounds, so that both see the same machine. It prints, per
configuration, the median time per call on each side and the median
ratio torch/Go with its range over the rounds (above 1: Go is faster).
torch and Go use the same number of threads (torch.set_num_threads,
-test.cpu). The torch engine is torch.backends.quantized.engine's
default (FBGEMM where torch has it; Debian's build has only oneDNN).
"""
import re
import statistics
import subprocess
import sys
import time

import torch
from torch.ao.quantization import quantize_dynamic

binary = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
torch.set_num_threads(threads)
torch.manual_seed(0)

configs = [(n, b) for n in (512, 1024) for b in (1, 32, 128)]
layers = {}
for n, b in configs:
    if n not in layers:
        f = torch.nn.Linear(n, n).eval()
        layers[n] = (f, quantize_dynamic(torch.nn.Sequential(f), {torch.nn.Linear}, dtype=torch.qint8)[0])


def torch_round():
    out = {}
    with torch.no_grad():
        for n, b in configs:
            x = torch.randn(b, n)
            for kind, layer in zip(("float32", "int8"), layers[n]):
                for _ in range(3):
                    layer(x)
                reps, t0 = 0, time.perf_counter()
                while True:
                    layer(x)
                    reps += 1
                    el = time.perf_counter() - t0
                    if el > 0.05:
                        break
                out[(n, b, kind)] = el / reps * 1e9
    return out


def go_round():
    res = subprocess.run([binary, "-test.run", "^$", "-test.bench", "^BenchmarkDense$",
                          "-test.benchtime", "0.05s", "-test.cpu", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    out = {}
    for m in re.finditer(r"BenchmarkDense/(\d+)x\d+/batch=(\d+)/(\w+)\S*\s+\d+\s+([\d.]+) ns/op", res):
        out[(int(m[1]), int(m[2]), m[3])] = float(m[4])
    return out


go, th = {}, {}
for r in range(rounds):
    sides = [(go_round, go), (torch_round, th)]
    if r % 2:
        sides.reverse()
    for run, acc in sides:
        for k, v in run().items():
            acc.setdefault(k, []).append(v)

print(f"torch {torch.__version__} engine {torch.backends.quantized.engine}, {threads} thread(s), {rounds} rounds")
print(f"{'layer':>10} {'batch':>5} {'kind':>7} {'Go µs':>9} {'torch µs':>9}  torch/Go median [min–max]")
for n, b in configs:
    for kind in ("float32", "int8"):
        g, t = go[(n, b, kind)], th[(n, b, kind)]
        ratios = sorted(tt / gg for tt, gg in zip(t, g))
        print(f"{n}x{n:<5} {b:>5} {kind:>7} {statistics.median(g)/1e3:9.1f} {statistics.median(t)/1e3:9.1f}  "
              f"{statistics.median(ratios):.2f} [{ratios[0]:.2f}–{ratios[-1]:.2f}]")
