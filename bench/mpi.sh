#!/usr/bin/env bash
# bench/mpi.sh: the distributed kvstore's benchmarks on this machine (loopback):
# MPI allreduce latency/bandwidth for 2 and 4 processes; then LeNet training
# steps (global batch 128, 200 steps a repetition: a LeNet step takes about
# a millisecond) and Keras CIFAR-10 CNN steps (batch 32 per process) with 1
# and 2 processes, in alternating pairs (one 1-process run,
# then one 2-process run, PAIRS times), reporting the median of the
# per-pair throughput ratios with their minimum and maximum, and the exposed
# exchange (the part of the step spent waiting for gradient sums, not hidden
# behind backward); LeNet with 4 processes once; and the scaling model for
# 8 and 64 workers on 10 and 100 Gbit/s networks. Each process gets
# GOMAXPROCS = cores / processes, and is bound to that many cores. Results go to stdout and
# bench/mpi-results.jsonl; the last line is one JSON object of the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s mpi-deps
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# MPIBENCH=path runs a binary built before (e.g. from another commit).
bin=${MPIBENCH:-}
if [ -z "$bin" ]; then
	bin=$(mktemp -d)/mpibench
	go build -tags mpi -o "$bin" ./bench/mpibench
fi
cores=$(nproc)
pairs=${PAIRS:-7}
out=bench/mpi-results.jsonl
: >"$out"
pass=()
for v in GOLUON_MPI_SPIN GOLUON_MPI_POLL; do
	[ -z "${!v:-}" ] || pass+=(-x "$v")
done
run() { # np args...
	local np=$1
	shift
	local procs=$((cores / np))
	[ "$procs" -ge 1 ] || procs=1
	# Each process bound to cores of its own when they go round (an unbound
	# 2-process LeNet step ran 40% slower: results/2026-11-29-mpi/NOTES.md);
	# oversubscribed jobs unbound.
	# (hardware threads: nproc counts them, and Open MPI's PE counts cores
	# unless told to use hardware threads)
	local bind=(--use-hwthread-cpus --map-by "slot:PE=$procs" --bind-to hwthread)
	[ $((np * procs)) -le "$cores" ] || bind=(--oversubscribe --bind-to none)
	mpirun "${bind[@]}" -np "$np" -x GOMAXPROCS="$procs" "${pass[@]}" "$bin" "$@" |
		tee >(grep '^JSON ' | sed 's/^JSON //' >>"$out") | grep -v '^JSON '
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(mpirun --version | head -1)"
for np in 2 4; do run "$np" -allreduce -reps 5; echo; done
for r in $(seq "$pairs"); do
	run 1 -step lenet -reps 3 -steps 200
	run 2 -step lenet -reps 3 -steps 200
done
run 4 -step lenet -reps 3 -steps 200 -model 10,100
echo
for r in $(seq "$pairs"); do
	run 1 -step cifar -steps 5 -reps 3
	run 2 -step cifar -steps 5 -reps 3
done
run 2 -step cifar -steps 5 -reps 3 -model 10,100
sleep 1 # the tee subshells append their last lines
echo
/usr/bin/python3 - "$out" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
steps = [r for r in rows if r.get("kind") == "step"]
summary = {}
print("| workload | 2 processes / 1 process (median [min–max] of pairs) | exposed exchange, 2 processes (median [min–max]) | pairs |")
print("|---|---|---|---:|")
for net in ("lenet", "cifar"):
    one = [r for r in steps if r["net"] == net and r["np"] == 1]
    two = [r for r in steps if r["net"] == net and r["np"] == 2][:len(one)]
    ratios = [b["samples_per_sec"] / a["samples_per_sec"] for a, b in zip(one, two)]
    shares = [100 * b["exchange_share"] for b in two]
    if not ratios:
        continue
    m, lo, hi = statistics.median(ratios), min(ratios), max(ratios)
    s = statistics.median(shares)
    print(f"| {net} | {m:.2f} [{lo:.2f}–{hi:.2f}] | {s:.1f}% [{min(shares):.1f}–{max(shares):.1f}%] | {len(ratios)} |")
    summary[f"{net}_2p_over_1p"] = round(m, 3)
    summary[f"{net}_2p_over_1p_min"] = round(lo, 3)
    summary[f"{net}_2p_over_1p_max"] = round(hi, 3)
    summary[f"{net}_2p_exposed_share"] = round(s / 100, 4)
print("JSON " + json.dumps(summary))
EOF
echo "results: $out"
