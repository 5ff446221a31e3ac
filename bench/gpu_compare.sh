#!/usr/bin/env bash
# gpu_compare.sh: Goluon's GPU benchmarks (cuda/bench_test.go, from a test
# binary built with -tags cuda) and the same workloads in PyTorch eager on
# the same GPU (pytorch_gpu_bench.py), in pairs: per workload, one short
# Goluon run, then one PyTorch run, REPS times (default 5). bench/pairs.py
# prints the median of the per-pair ratios with their minimum and maximum
# (> 1: Goluon is better), the training steps on 4 virtual GPUs against one
# (lenet_4v_over_1, cifar_4v_over_1, mlp_4v_over_1, from the same Go run),
# the host synchronisations and copies per step, and one JSON line.
#
# The device machine has no Go: build the binary here and carry it.
#   sh cuda/check.sh bin/cuda                       # bin/cuda/cuda.test
#   BIN=bin/cuda/cuda.test bash bench/gpu_compare.sh
# KEEP=dir keeps every run's raw output; SCALE multiplies the iteration
# counts on both sides; PY names the Python that has torch; ONLY=a,b runs
# those workloads alone (lenet mlp cifar infer ops hybrid, and resnet50).
# hybrid: LeNet's batch-1 inference and training step eager, hybridized and
# with CUDA graphs (cuda/hybrid_test.go), each against PyTorch eager and
# against eager Goluon of the same run (KEY_over_eager).
#
# resnet50 is not in the default list: ResNet-50's training step and
# inference (224x224, batch 32; BenchmarkTrainStepResNet50GPU and
# BenchmarkInferResNet50GPU in cuda/bench_resnet_test.go, two Go runs in
# one file) against torchvision's resnet50, run with TF32 on both sides
# (GOLUON_CUDNN_TF32=1, --tf32: cuDNN and, in PyTorch, matmuls; Goluon's
# cuBLAS products stay float32); TF32=0 turns it off on both sides
# (GOLUON_CUDNN_TF32=0, --no-tf32). The PyTorch run's standard error, with
# its TF32 settings, goes to py-REP-resnet50.err.
#   BIN=bin/cuda/cuda.test ONLY=resnet50 REPS=3 bash bench/gpu_compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
SCALE=${SCALE:-1}
BIN=${BIN:-bin/cuda/cuda.test}
PY=${PY:-python3}
ONLY=${ONLY:-lenet,mlp,cifar,infer,ops,hybrid}
TF32=${TF32:-1}
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"

iters() { awk -v n="$1" -v s="$SCALE" 'BEGIN { v = int(n * s); print (v < 1 ? 1 : v) }'; }
gobench() { # pattern, iterations
	GOLUON_VIRTUAL_GPUS=4 "$BIN" -test.run '^$' -test.bench "$1" -test.benchtime "$(iters "$2")"x
}
pair() { # rep, name, go pattern, iterations, PyTorch workloads
	gobench "$3" "$4" >"$out/go-$1-$2.txt"
	$PY bench/pytorch_gpu_bench.py --scale "$SCALE" --only "$5" >"$out/py-$1-$2.json"
}

for r in $(seq 1 "$REPS"); do
	echo "rep $r/$REPS" >&2
	for w in ${ONLY//,/ }; do
		case $w in
		lenet) pair "$r" lenet TrainStepLeNetGPU 500 TrainStepLeNetGPU/gpu0 ;;
		mlp) pair "$r" mlp TrainStepMLPGPU 1000 TrainStepMLPGPU/gpu0 ;;
		cifar) pair "$r" cifar TrainStepKerasCIFARGPU 300 TrainStepKerasCIFARGPU/gpu0 ;;
		infer) pair "$r" infer 'InferLeNetGPU$' 1000 InferLeNetGPU ;;
		hybrid) # eager, hybridized and CUDA-graph variants in one Go run, against PyTorch eager
			{
				gobench 'HybridInferLeNetGPUB1' 1000
				gobench 'HybridTrainLeNetGPU' 500
			} >"$out/go-$r-hybrid.txt"
			$PY bench/pytorch_gpu_bench.py --scale "$SCALE" --only HybridInferLeNetGPUB1,HybridTrainLeNetGPU >"$out/py-$r-hybrid.json"
			;;
		ops)
			{
				gobench OpOverhead 20000
				gobench OpLatency 5000
			} >"$out/go-$r-ops.txt"
			$PY bench/pytorch_gpu_bench.py --scale "$SCALE" --only OpOverhead,OpLatency >"$out/py-$r-ops.json"
			;;
		resnet50)
			if [ "$TF32" = 1 ]; then tf=(1 --tf32); else tf=(0 --no-tf32); fi
			{
				GOLUON_CUDNN_TF32=${tf[0]} gobench 'TrainStepResNet50GPU' 40
				GOLUON_CUDNN_TF32=${tf[0]} gobench 'InferResNet50GPU' 100
			} >"$out/go-$r-resnet50.txt"
			$PY bench/pytorch_gpu_bench.py --scale "$SCALE" "${tf[1]}" \
				--only TrainStepResNet50GPU/gpu0,InferResNet50GPU \
				>"$out/py-$r-resnet50.json" 2>"$out/py-$r-resnet50.err" ||
				{ cat "$out/py-$r-resnet50.err" >&2; exit 1; }
			;;
		*) echo "gpu_compare.sh: unknown workload $w" >&2; exit 2 ;;
		esac
	done
done
$PY bench/pairs.py "$out"
