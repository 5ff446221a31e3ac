#!/usr/bin/env bash
# gpu_compare.sh: Goluon's GPU benchmarks (cuda/bench_test.go, from a test
# binary built with -tags cuda) and the same workloads in PyTorch eager on
# the same GPU (pytorch_gpu_bench.py), alternating, REPS repetitions each
# (default 3); prints a table of medians, the ratio per workload (> 1:
# Goluon is better) and one JSON line of the ratios (bench/summarize.py).
#
# The device machine has no Go: build the binary here and carry it.
#   sh cuda/check.sh bin/cuda                       # bin/cuda/cuda.test
#   BIN=bin/cuda/cuda.test bash bench/gpu_compare.sh
# KEEP=dir keeps every repetition's raw output; SCALE multiplies the
# iteration counts on both sides; PY names the Python that has torch.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
SCALE=${SCALE:-1}
BIN=${BIN:-bin/cuda/cuda.test}
PY=${PY:-python3}
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"

iters() { awk -v n="$1" -v s="$SCALE" 'BEGIN { v = int(n * s); print (v < 1 ? 1 : v) }'; }
gobench() { # pattern, iterations
	GOLUON_VIRTUAL_GPUS=4 "$BIN" -test.run '^$' -test.bench "$1" -test.benchtime "$(iters "$2")"x
}

for r in $(seq 1 "$REPS"); do
	echo "rep $r/$REPS: goluon" >&2
	{
		gobench 'TrainStepLeNetGPU' 500
		gobench 'TrainStepMLPGPU' 1000
		gobench 'TrainStepKerasCIFARGPU' 300
		gobench 'InferLeNetGPU$' 1000
		gobench 'OpOverhead' 20000
		gobench 'OpLatency' 5000
	} >"$out/go-$r.txt"
	echo "rep $r/$REPS: pytorch" >&2
	$PY bench/pytorch_gpu_bench.py --scale "$SCALE" >"$out/py-$r-a.json"
done
$PY bench/summarize.py "$out"
