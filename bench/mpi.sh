#!/usr/bin/env bash
# bench/mpi.sh: the distributed kvstore's benchmarks on this machine (loopback):
# MPI allreduce latency/bandwidth for 2 and 4 processes, LeNet training steps
# with 1, 2 and 4 processes (global batch 128), Keras CIFAR-10 CNN steps with
# 1 and 2 processes (batch 32 each) with the share of the step spent in the
# gradient exchange, and the scaling model for 8 and 64 workers on 10 and
# 100 Gbit/s networks. Each process gets GOMAXPROCS = cores / processes.
# Results go to stdout and bench/mpi-results.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s mpi-deps
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=$(mktemp -d)/mpibench
go build -tags mpi -o "$bin" ./bench/mpibench
cores=$(nproc)
reps=${REPS:-5}
out=bench/mpi-results.jsonl
: >"$out"
run() { # np args...
	local np=$1
	shift
	local procs=$((cores / np))
	[ "$procs" -ge 1 ] || procs=1
	mpirun --oversubscribe --bind-to none -np "$np" -x GOMAXPROCS="$procs" "$bin" -reps "$reps" "$@" |
		tee >(grep '^JSON ' | sed 's/^JSON //' >>"$out") | grep -v '^JSON '
}
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(mpirun --version | head -1)"
for np in 2 4; do run "$np" -allreduce; echo; done
for np in 1 2 4; do run "$np" -step lenet -model 10,100; echo; done
for np in 1 2; do run "$np" -step cifar -steps 10 -model 10,100; echo; done
echo "results: $out"
