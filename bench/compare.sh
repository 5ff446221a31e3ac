#!/usr/bin/env bash
# make bench: Goluon's CPU benchmarks and the same workloads in PyTorch, in
# pairs: per workload group, one short Goluon run, then one PyTorch run in
# each of its two thread configurations (the better counts), REPS times
# (default 3). summarize.py prints the median of the per-pair ratios with
# their minimum and maximum, so that a slow phase of the machine moves one
# pair rather than a whole side, then one JSON line ("KEY", "KEY_min",
# "KEY_max"). KEEP=dir also keeps the raw output of every run; ONLY=a,b
# runs those groups alone (cifar lenet lenet32 mlp infer matmul conv rss amp
# mnist resnet hybrid, and resnet50, which is not in the default set: minutes).
#
# SCALE (default 1) multiplies every iteration count on both sides (Go
# -benchtime and pytorch_bench.py --scale), e.g. SCALE=0.05 REPS=1 for a
# quick check that everything runs; only SCALE=1 gives steady numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
SCALE=${SCALE:-1}
ONLY=${ONLY:-cifar,lenet,lenet32,mlp,infer,matmul,conv,rss,mnist,resnet,amp,hybrid}
GO=${GO:-go}
PY=/usr/bin/python3

# PyTorch from Debian; its BLAS is whatever libblas.so.3 points at, and the
# reference BLAS is ~50x slower than OpenBLAS, so make sure OpenBLAS is in.
need=()
$PY -c 'import torch' 2>/dev/null || need+=(python3-torch)
$PY -c 'import torchvision' 2>/dev/null || need+=(python3-torchvision)
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || dpkg -s libopenblas0-openmp >/dev/null 2>&1 ||
	dpkg -s libopenblas0-serial >/dev/null 2>&1 || need+=(libopenblas0-pthread)
# Fashion-MNIST for the gluon-mnist epoch row.
FMNIST=/usr/share/datasets/fashion-mnist
[ -f "$FMNIST/train-images-idx3-ubyte.gz" ] || need+=(dataset-fashion-mnist)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
	else
		echo "missing: ${need[*]}; run: sudo apt-get install -y ${need[*]}" >&2
		exit 1
	fi
fi

# KEEP=dir keeps every repetition's raw output (go test text, PyTorch JSON)
# in dir, to look behind the medians.
out=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	# Only the files: $out also holds the gluon-mnist binary and output
	# directories, which cp would refuse (and set -e turn into a failure).
	trap 'find "$out" -maxdepth 1 -type f -exec cp {} "$KEEP"/ \; ; rm -rf "$out"' EXIT
else
	trap 'rm -rf "$out"' EXIT
fi

# glibc malloc tuned against mmap/trim churn of large tensors (both sides).
export MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=67108864

iters() { # n scaled by SCALE, at least 1 (as pytorch_bench.py's it())
	awk -v n="$1" -v s="$SCALE" 'BEGIN { v = int(n * s); print (v < 1 ? 1 : v) }'
}

mkdir -p "$out/bin"
$GO test -c -o "$out/bin/bench.test" ./bench/ # (not kept by KEEP)
gobench() { # pattern, iterations (scaled)
	(cd bench && "$out/bin/bench.test" -test.run '^$' -test.bench "$1" -test.benchtime "$(iters "$2")"x)
}

# Peak RSS runs only LeNet's training step, each side in a process of its
# own, with glibc malloc at its defaults.
nomalloc=(env -u MALLOC_MMAP_THRESHOLD_ -u MALLOC_TRIM_THRESHOLD_ -u MALLOC_TOP_PAD_)

# The machine's float32 FMA peak (bench/fmapeak: register-only FMA loops,
# 256- and 512-bit, 1 thread and every core), against which summarize.py
# puts the matrix products.
echo "FMA peak (bench/fmapeak)" >&2
$GO build -o "$out/bin/fmapeak" ./bench/fmapeak # (not kept by KEEP)
"$out/bin/fmapeak" >"$out/fmapeak.txt"

# The gluon-mnist tutorial (one epoch of LeNet on Fashion-MNIST, its
# defaults: cpu:0 and cpu:1, global batch 128, SGD) against its PyTorch
# twin (tutorials/gluon-mnist/pytorch_gluon_mnist.py, 2 threads). Both
# print the epoch's training throughput; the row is the training time of
# one epoch of 60,000 images (data loading included, evaluation not).
# SCALE < 1 trains on a part of the set (-limit / --limit).
$GO build -o "$out/bin/gluon-mnist" ./tutorials/gluon-mnist # (not kept by KEEP)
gmlimit=$(awk -v s="$SCALE" 'BEGIN { print (s >= 1 ? 0 : int(60000 * s) + 1) }')
gmsamples=$([ "$gmlimit" = 0 ] && echo 60000 || echo "$gmlimit")
epoch_s() { # the summary (last line, JSON): training samples / samples_per_sec
	tail -1 | $PY -c 'import json,sys; print(int(sys.argv[1]) / json.loads(sys.stdin.read())["samples_per_sec"])' "$gmsamples"
}

pybench() { # rep, group: PyTorch in both thread configurations (issue 6):
	# intra-op threads 2 with single-threaded OpenBLAS, and the reverse.
	OPENBLAS_NUM_THREADS=1 $PY bench/pytorch_bench.py --threads 2 --scale "$SCALE" --only "$2" >"$out/py-$1-$2-a.json"
	OPENBLAS_NUM_THREADS=2 $PY bench/pytorch_bench.py --threads 1 --scale "$SCALE" --only "$2" >"$out/py-$1-$2-b.json"
}

# The core-to-core round trip (bench/fmapeak -handoff, a few ms) before
# each pair and after it: on these VMs it moves between about 100 and
# 700ns from minute to minute, and every kernel split over the cores pays
# it, on both sides. summarize.py prints it per pair.
handoff() { # rep, group
	"$out/bin/fmapeak" -handoff | tail -1 >>"$out/handoff-$1-$2.json"
}

for r in $(seq 1 "$REPS"); do
	for g in ${ONLY//,/ }; do
		echo "rep $r/$REPS: $g" >&2
		handoff "$r" "$g"
		py=1 # the group has a PyTorch side run by pybench
		case $g in
		cifar) gobench 'TrainStepKerasCIFAR' 15 >"$out/go-$r-$g.txt" ;;
		lenet) gobench 'TrainStepLeNet$' 200 >"$out/go-$r-$g.txt" ;;
		lenet32) gobench 'TrainStepLeNetB32$' 400 >"$out/go-$r-$g.txt" ;;
		mlp) gobench 'TrainStepMLP' 200 >"$out/go-$r-$g.txt" ;;
		infer) gobench 'InferLeNet' 200 >"$out/go-$r-$g.txt" ;;
		resnet) # ResNet-18 at CIFAR's shape: training step and inference
			{
				gobench 'BenchmarkTrainStepResNet18CIFAR$' 10
				gobench 'BenchmarkInferResNet18CIFAR$' 20
			} >"$out/go-$r-$g.txt"
			;;
		resnet50) # ResNet-50 at 224x224, batch 32: training step and inference
			{
				gobench 'TrainStepResNet50$' 3
				gobench 'InferResNet50$' 5
			} >"$out/go-$r-$g.txt"
			;;
		matmul) # about 1 s per matrix size (same counts in pytorch_bench.py),
			# after the pair's own FMA peak (0.4 s): a slow phase of the
			# host lowers the peak too, and summarize.py puts each pair's
			# products against its own peak
			"$out/bin/fmapeak" -seconds 0.2 >"$out/peak-$r-$g.txt"
			{
				gobench 'MatMul$/n=128$' 20000
				gobench 'MatMul$/n=256$' 4000
				gobench 'MatMul$/n=512$' 500
				gobench 'MatMul$/n=1024$' 80
				gobench 'MatMul$/n=2048$' 12
				gobench 'MatMulBF16/n=256$' 3000
				gobench 'MatMulBF16/n=512$' 500
				gobench 'MatMulBF16/n=1024$' 80
			} >"$out/go-$r-$g.txt"
			;;
		conv) # per-layer convolutions, forward and fwdbwd: about 3 s for the
			# LeNet layers and 13 s for the CIFAR CNN's
			{
				gobench 'ConvLayer/lenet' 400
				gobench 'ConvLayer/cifar' 40
			} >"$out/go-$r-$g.txt"
			;;
		rss) # peak RSS, each side in a process of its own; summarize.py keeps the lower PyTorch one
			(cd bench && "${nomalloc[@]}" "$out/bin/bench.test" -test.run '^$' -test.bench 'TrainStepLeNetRSS$' -test.benchtime "$(iters 200)"x) >"$out/go-$r-$g.txt"
			OPENBLAS_NUM_THREADS=1 "${nomalloc[@]}" $PY bench/pytorch_bench.py --threads 2 --scale "$SCALE" --rss-only >"$out/py-$r-$g-a.json"
			OPENBLAS_NUM_THREADS=2 "${nomalloc[@]}" $PY bench/pytorch_bench.py --threads 1 --scale "$SCALE" --rss-only >"$out/py-$r-$g-b.json"
			py=0
			;;
		hybrid) # gluon.Hybridize: eager and hybridized rows in one process (the ratio printed after the table), PyTorch eager
			{
				gobench 'HybridTrainLeNetB32' 400
				gobench 'HybridTrainMLP' 200
				gobench 'HybridInferLeNetB1' 4000
				gobench 'HybridInferResNet18CIFAR' 20
			} >"$out/go-$r-$g.txt"
			;;
		amp) # mixed precision against float32, Goluon alone (the ratios printed after the table)
			gobench 'TrainStepAMP' 20 >"$out/go-$r-$g.txt"
			py=0
			;;
		mnist)
			echo "BenchmarkGluonMNISTEpoch 1 $("$out/bin/gluon-mnist" -epochs 1 -limit "$gmlimit" -data "$FMNIST" -out "$out/gm" 2>/dev/null | epoch_s) s/epoch" >"$out/go-$r-$g.txt"
			s=$(OPENBLAS_NUM_THREADS=1 $PY tutorials/gluon-mnist/pytorch_gluon_mnist.py --epochs 1 --limit "$gmlimit" --data "$FMNIST" --threads 2 | epoch_s)
			echo "{\"GluonMNISTEpoch\": $s}" >"$out/py-$r-$g-a.json"
			py=0
			;;
		*) echo "compare.sh: unknown group $g" >&2; exit 2 ;;
		esac
		if [ "$py" = 1 ]; then
			pybench "$r" "$g"
		fi
		handoff "$r" "$g"
	done
done

$PY bench/summarize.py "$out"
