#!/usr/bin/env bash
# device_run.sh: the GPU runs of issue 15 on a device machine, phase by
# phase, each under a time limit, each logged to <phase>.log in $LOGS
# (default /tmp/devout) and summarised on stdout; at the end $LOGS, the
# tutorials' outputs included, is packed into $OUT/devout.tgz (the device
# tool brings $OUT back, at most 8 files).
#
# usage (on the device, from the repository root, the binaries of
# `sh cuda/check.sh bin/cuda` gzipped into bin/dev and Fashion-MNIST's four
# .gz files in bin/fashion):
#   bash cuda/device_run.sh info smoke tests equiv bench mnist ...
# phases: info smoke conformance tests optimizer equiv memory bench profile mnist amp
#         mnist4 mnistseeds cifar minigooglenet mnistbn inferparts inferab profile4
#         scale dptests mnistbn4 vreduce bndiag resnet50 hybrid ampspeed charlm r50prof
#         kerneltests b1prof b1ab halfab
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
LOGS=${LOGS:-/tmp/devout}
mkdir -p "$OUT" "$LOGS" bin/run
pack() { tar czf "$OUT/devout.tgz" --exclude "*.safetensors" --exclude "*.ckpt*" -C "$LOGS" . ; }
trap pack EXIT
for f in bin/dev/*.gz; do
	[ -e "$f" ] || continue
	b=bin/run/$(basename "$f" .gz)
	[ -x "$b" ] || { gunzip -c "$f" >"$b" && chmod +x "$b"; }
done
R=bin/run
export PATH=$PATH:/usr/local/cuda/bin

phase() { # name, seconds, command...
	local name=$1 secs=$2
	shift 2
	local t0=$SECONDS
	echo "== $name (limit ${secs}s): $*" | tee -a "$LOGS/$name.log"
	timeout -k 10 "$secs" "$@" >>"$LOGS/$name.log" 2>&1
	local rc=$?
	echo "== $name: rc $rc in $((SECONDS - t0))s" | tee -a "$LOGS/$name.log"
	return $rc
}
tailf() { grep -v -e '--- PASS' -e '^=== RUN' -e '^=== PAUSE' -e '^=== CONT' "$LOGS/$1.log" | tail -n "$2"; }

for p in "$@"; do
	case $p in
	info)
		{
			nvidia-smi
			nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
			nvcc --version | tail -2
			python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
			ldconfig -p | grep -E 'libcudnn|libcublas' | head
			find / -name 'libcudnn.so*' -o -name 'libcublas.so*' 2>/dev/null | grep -v proc | head -20
			nproc; free -g
		} >"$LOGS/info.log" 2>&1
		head -30 "$LOGS/info.log" | grep -E 'H100|H200|Driver|torch|libcudnn|release' | head
		;;
	smoke) phase smoke 120 $R/cuda.test -test.run 'Smoke' -test.v; tailf smoke 15 ;;
	conformance) phase conformance 240 $R/cuda.test -test.run 'ConformanceGPU0|GradChecksGPU0' -test.v; tailf conformance 30 ;;
	tests) GOLUON_VIRTUAL_GPUS=2 phase tests 300 $R/cuda.test -test.run . -test.v; tailf tests 40 ;;
	optimizer) phase optimizer 120 $R/optimizer.test -test.run 'FusedGPU' -test.v; tailf optimizer 5 ;;
	equiv) GOLUON_VIRTUAL_GPUS=4 phase equiv 120 $R/gluon.test -test.run TestEquivalenceGPU -test.v; tailf equiv 10 ;;
	memory) phase memory 200 $R/cuda.test -test.run 'MemoryFlat|AllocLargerThanDevice|OutOfMemory' -test.v; tailf memory 12 ;;
	bench) phase bench 300 env BIN=$R/cuda.test KEEP="$LOGS/bench-raw" REPS=${REPS:-3} SCALE=${SCALE:-1} bash bench/gpu_compare.sh; tail -15 "$LOGS/bench.log" ;;
	mnist) phase mnist 300 $R/gluon-mnist -contexts gpu:0 -epochs ${EPOCHS:-10} -data bin/fashion -out "$LOGS/gm1"; tail -6 "$LOGS/mnist.log" ;;
	mnist4) GOLUON_VIRTUAL_GPUS=4 phase mnist4 300 $R/gluon-mnist -contexts gpu:0,gpu:1,gpu:2,gpu:3 -epochs ${EPOCHS:-10} -data bin/fashion -out "$LOGS/gm4"; tail -6 "$LOGS/mnist4.log" ;;
	inferab) # the whole inference step alone, Goluon and PyTorch alternating, REPS times
		for r in $(seq 1 "${REPS:-7}"); do
			phase inferab 60 $R/cuda.test -test.run '^$' -test.bench 'InferLeNetGPU$' -test.benchtime 2000x
			phase inferab 60 python3 bench/pytorch_gpu_infer.py --full-only --iters 2000
		done
		grep -E '^Benchmark|^\{' "$LOGS/inferab.log"
		;;
	profile4) # GPU timeline of the LeNet step on 1 and 4 virtual GPUs
		GOLUON_VIRTUAL_GPUS=4 GOLUON_CUDA_PROFILE=gpu phase profile4 120 $R/cuda.test -test.run '^$' -test.bench 'TrainStepLeNetGPU' -test.benchtime 200x
		grep -A40 'time per step' "$LOGS/profile4.log" | head -90
		;;
	mnistseeds) # gluon-mnist 10 epochs with seeds 1..SEEDS, on 4 virtual GPUs and on gpu:0
		for s in $(seq 1 "${SEEDS:-5}"); do
			GOLUON_VIRTUAL_GPUS=4 phase mnistseeds 120 $R/gluon-mnist -contexts gpu:0,gpu:1,gpu:2,gpu:3 -epochs 10 -seed "$s" -data bin/fashion -out "$LOGS/g4s$s"
			phase mnistseeds 120 $R/gluon-mnist -contexts gpu:0 -epochs 10 -seed "$s" -data bin/fashion -out "$LOGS/g1s$s"
		done
		grep '^{' "$LOGS/mnistseeds.log" | cut -c1-160
		;;
	cifar | minigooglenet)
		[ -d /tmp/cifarf ] || python3 cuda/cifar_from_fashion.py bin/fashion /tmp/cifarf
		prog=keras-cifar10-cnn
		[ $p = minigooglenet ] && prog=minigooglenet
		phase $p 300 $R/$prog -contexts gpu:0 -epochs 1 -data /tmp/cifarf -out "$LOGS/$p"
		tail -6 "$LOGS/$p.log"
		;;
	profile)
		GOLUON_VIRTUAL_GPUS=4 GOLUON_CUDA_PROFILE=1 phase profile 200 $R/cuda.test -test.run '^$' -test.bench 'TrainStep|InferLeNet' -test.benchtime 30x
		grep -A25 'GPU time per step' "$LOGS/profile.log" | head -120
		;;
	inferparts) # LeNet inference taken apart, both sides; GPU timeline; the driver's pageable copies
		phase inferparts 240 bash -c "
			set -o pipefail
			rc=0
			for r in 1 2 3; do
				$R/cuda.test -test.run '^\$' -test.bench 'InferLeNetGPU' -test.benchtime 1000x || rc=1
				GOLUON_CUDA_PINNED_MIN=1000000000 $R/cuda.test -test.run '^\$' -test.bench 'InferLeNetGPU' -test.benchtime 1000x | sed 's/^Benchmark/pageable: Benchmark/' || rc=1
				python3 bench/pytorch_gpu_infer.py --iters 1000 || rc=1
			done
			GOLUON_CUDA_PROFILE=gpu $R/cuda.test -test.run '^\$' -test.bench 'InferLeNetGPU' -test.benchtime 1000x || rc=1
			python3 bench/pytorch_gpu_infer.py --iters 200 --profile || rc=1
			exit \$rc"
		grep -E 'Benchmark|^\{' "$LOGS/inferparts.log" | grep -v 'time per step' | head -80
		;;
	scale) # training steps on 1 and 4 virtual GPUs, per binary in $AB (default cuda), alternating, REPS times
		for r in $(seq 1 "${REPS:-3}"); do
			for b in ${AB:-cuda}; do
				echo "## $b run" >>"$LOGS/scale.log"
				GOLUON_VIRTUAL_GPUS=4 phase scale 120 $R/$b.test -test.run '^$' \
					-test.bench "${SCALE_BENCH:-TrainStep(LeNet|KerasCIFAR|MLP)GPU}" -test.benchtime "${SCALE_ITERS:-300}x"
			done
		done
		awk '/^## /{v=$2"/"$3} /^Benchmark/{for(i=3;i<NF;i++) if($(i+1)=="samples/s"){s=$i}; for(i=3;i<NF;i++) if($(i+1)=="syncs/step"){y=$i}; print v, $1, s, "syncs/step", y; y=""}' "$LOGS/scale.log" |
			sort -k1,2 -s | awk '{k=$1" "$2; a[k]=a[k]" "int($3); y[k]=$5} END {for (k in a) print k":", a[k], "syncs/step", y[k]}' | sort
		;;
	dptests) # data parallelism on 4 virtual GPUs: no host syncs, NCCL one-rank smoke, copies, equivalence
		GOLUON_VIRTUAL_GPUS=4 phase dptests 180 $R/cuda.test -test.run 'DataParallel|NCCL|Copy|Concurrent|LeNetGrads|VirtualAllReduce' -test.v
		GOLUON_VIRTUAL_GPUS=4 phase dptests 180 $R/gluon.test -test.run 'TestEquivalenceGPU' -test.v
		grep -E '^(--- |ok|FAIL|PASS)|nccl_test|dataparallel_test|largest|differ' "$LOGS/dptests.log" | head -40
		;;
	mnistbn4) # the tutorial's 1-vs-N timing: one epoch on gpu:0, then on 4 virtual GPUs
		phase mnistbn4 300 $R/mnist-convnet-bn -contexts gpu:0 -epochs ${EPOCHS:-1} -data bin/fashion -out "$LOGS/bn1"
		GOLUON_VIRTUAL_GPUS=4 phase mnistbn4 300 $R/mnist-convnet-bn -contexts gpu:0,gpu:1,gpu:2,gpu:3 -epochs ${EPOCHS:-1} -data bin/fashion -out "$LOGS/bn4"
		grep -E 'epoch|total|^\{' "$LOGS/mnistbn4.log" | cut -c1-200
		;;
	vreduce) # steps on 1 and 4 virtual GPUs: buckets summed by one kernel (default) against copies (GOLUON_VREDUCE=0), alternating, REPS times
		for r in $(seq 1 "${REPS:-3}"); do
			for m in kernel copies; do
				echo "## $m run" >>"$LOGS/vreduce.log"
				v=1
				[ $m = copies ] && v=0
				GOLUON_VREDUCE=$v GOLUON_VIRTUAL_GPUS=4 phase vreduce 120 $R/cuda.test -test.run '^$' \
					-test.bench 'TrainStep(LeNet|KerasCIFAR|MLP)GPU' -test.benchtime "${SCALE_ITERS:-300}x"
			done
		done
		awk '/^## /{v=$2} /^Benchmark/{for(i=3;i<NF;i++) if($(i+1)=="samples/s"){s=$i}; print v, $1, s}' "$LOGS/vreduce.log" |
			sort -k1,2 -s | awk '{k=$1" "$2; a[k]=a[k]" "int($3)} END {for (k in a) print k":", a[k]}' | sort
		;;
	bndiag) # mnist-convnet-bn's validation on 4 virtual GPUs: against gpu:0 at the same global batch (as few BatchNorm updates), SyncBatchNorm, more epochs
		phase bndiag 120 $R/mnist-convnet-bn -contexts gpu:0 -epochs 1 -batch-size 512 -data bin/fashion -out "$LOGS/bnd-g0b512"
		GOLUON_VIRTUAL_GPUS=4 phase bndiag 120 $R/mnist-convnet-bn -contexts gpu:0,gpu:1,gpu:2,gpu:3 -epochs 1 -sync-bn -data bin/fashion -out "$LOGS/bnd-4sync"
		GOLUON_VIRTUAL_GPUS=4 phase bndiag 150 $R/mnist-convnet-bn -contexts gpu:0,gpu:1,gpu:2,gpu:3 -epochs 4 -data bin/fashion -out "$LOGS/bnd-4e4"
		phase bndiag 150 $R/mnist-convnet-bn -contexts gpu:0 -epochs 4 -batch-size 512 -data bin/fashion -out "$LOGS/bnd-g0b512e4"
		grep -E '^==|^Epoch' "$LOGS/bndiag.log" | cut -c1-200
		;;
	resnet50) # ResNet-50 (224x224, batch 32) training step and inference against PyTorch eager, in pairs
		phase resnet50 300 env BIN=$R/cuda.test KEEP="$LOGS/resnet50-raw" ONLY=resnet50 REPS=${REPS:-3} bash bench/gpu_compare.sh
		tail -22 "$LOGS/resnet50.log"
		;;
	amp) # half-precision storage on the GPU (casts bitwise F16From/BF16From, the conformance
		# suite in float16 and bfloat16), then gluon-mnist in float32 and with -amp fp16
		phase amp 240 $R/cuda.test -test.run 'HalfCastKernels|ConformanceGPU0' -test.v
		for a in "" fp16; do
			phase amp 240 $R/gluon-mnist -contexts gpu:0 -epochs ${EPOCHS:-3} ${a:+-amp $a} -data bin/fashion -out "$LOGS/gmamp$a"
		done
		tail -4 "$LOGS/amp.log" ;;
	hybrid) # LeNet hybridized on gpu(0): equal to eager, then batch-1 latency and the training step, eager/hybrid/compiled, against PyTorch at batch 1, REPS pairs
		phase hybrid 60 $R/cuda.test -test.run 'TestHybridLeNetGPU' -test.v
		for r in $(seq 1 "${REPS:-3}"); do
			phase hybrid 60 $R/cuda.test -test.run '^$' -test.bench 'HybridInferLeNetGPUB1|HybridTrainLeNetGPU' -test.benchtime "${HYBRID_ITERS:-500}x"
			phase hybrid 60 python3 bench/pytorch_gpu_bench.py --only HybridInferLeNetGPUB1
		done
		grep -E '^(--- |ok|FAIL)|^Benchmark|^\{' "$LOGS/hybrid.log" | cut -c1-200
		;;
	ampspeed) # training steps in float32, float16 and bfloat16 autocast, one variant per process (its own peak), against torch.autocast, REPS pairs
		for r in $(seq 1 "${REPS:-2}"); do
			for v in KerasCIFAR/float32 KerasCIFAR/float16 KerasCIFAR/bfloat16 LeNet/float32 LeNet/float16 ResNet18/float32 ResNet18/float16 ResNet18/bfloat16; do
				phase ampspeed 60 $R/cuda.test -test.run '^$' -test.bench "TrainStepAMPGPU/$v\$" -test.benchtime "${AMP_ITERS:-200}x"
				phase ampspeed 60 python3 bench/pytorch_gpu_bench.py --only "TrainStepAMPGPU/$v"
			done
		done
		grep -E '^Benchmark|^\{' "$LOGS/ampspeed.log" | cut -c1-200
		;;
	charlm) # the char-lm GPT's training step on gpu(0) against PyTorch eager on cuda:0, REPS pairs
		for r in $(seq 1 "${REPS:-3}"); do
			CHARLM_BENCH_CONTEXTS=gpu:0 phase charlm 90 $R/char-lm.test -test.run '^$' -test.bench 'Step/gpt$' -test.benchtime 60x
			DEVICE=cuda phase charlm 90 python3 tutorials/char-lm/pytorch_char_lm.py --bench gpt 60
		done
		grep -E '^Benchmark|^\{' "$LOGS/charlm.log" | cut -c1-200
		;;
	kerneltests) # the fused BatchNorm statistics and BatchNorm+ReLU kernels, max pooling's gradient, staged writes, ReLU of −0, half GEMM/conv/elementwise, device graphs, against the composed kernels and the CPU; the conformance suite, gradient checks and second-derivative checks (GradGradChecksGPU0 matches GradChecksGPU0)
		phase kerneltests 240 $R/cuda.test -test.run 'BatchNormReluGPU|PoolBackwardGPU|WriteStaging|BatchNormStatsKernels|ReluSignedZeroGPU|MaxSignedZeroGPU|ConvDirectGPU|BatchNormFused|HybridLeNetGPU|HalfGemmGPU|HalfConvGPU|HalfElementwiseGPU|HalfPoolGPU|HalfReduceGPU|HalfBatchNormGPU|DeviceGraph|ConformanceGPU0|GradChecksGPU0|LeNetGradsAgainstCPU' -test.v
		grep -E '^(--- FAIL|ok|FAIL|PASS)' "$LOGS/kerneltests.log" | head -20
		grep -c -- '--- PASS' "$LOGS/kerneltests.log"
		;;
	halfab) # half precision on the device's own kernels (GemmEx, cuDNN half, half elementwise) against widening to float32 (GOLUON_CUDA_HALF=0), alternating, REPS times
		for r in $(seq 1 "${REPS:-2}"); do
			for v in 1 0; do
				for n in KerasCIFAR/float16 KerasCIFAR/bfloat16 LeNet/float16 ResNet18/float16; do
					echo "## half=$v $n" >>"$LOGS/halfab.log"
					GOLUON_CUDA_HALF=$v phase halfab 60 $R/cuda.test -test.run '^$' -test.bench "TrainStepAMPGPU/$n\$" -test.benchtime "${AMP_ITERS:-200}x"
				done
			done
		done
		grep -E '^## |^Benchmark' "$LOGS/halfab.log" | cut -c1-140
		;;
	b1ab) # LeNet's batch-1 inference with tiny convolutions on conv_direct against cuDNN (GOLUON_CUDA_DIRECT_CONV=0), alternating, REPS times
		for r in $(seq 1 "${REPS:-3}"); do
			for v in 1 0; do
				echo "## direct=$v" >>"$LOGS/b1ab.log"
				GOLUON_CUDA_DIRECT_CONV=$v phase b1ab 60 $R/cuda.test -test.run '^$' -test.bench 'HybridInferLeNetGPUB1' -test.benchtime 1000x
			done
		done
		grep -E '^## |^Benchmark' "$LOGS/b1ab.log" | cut -c1-120
		;;
	b1prof) # where LeNet's batch-1 inference spends its time on the GPU, eager and hybridized
		GOLUON_CUDA_PROFILE=gpu phase b1prof 60 $R/cuda.test -test.run '^$' -test.bench 'HybridInferLeNetGPUB1' -test.benchtime 500x
		grep -E -A16 'time per step' "$LOGS/b1prof.log" | head -60
		;;
	r50prof) # where ResNet-50's inference and training step spend GPU time (kernel table), TF32 on
		GOLUON_CUDNN_TF32=1 GOLUON_CUDA_PROFILE=gpu phase r50prof 120 $R/cuda.test -test.run '^$' -test.bench 'InferResNet50GPU|TrainStepResNet50GPU' -test.benchtime 20x
		grep -A30 'time per step' "$LOGS/r50prof.log" | head -100
		;;
	mnistbn) phase mnistbn 300 $R/mnist-convnet-bn -contexts gpu:0 -epochs 1 -data bin/fashion -out "$LOGS/mnistbn"; tail -6 "$LOGS/mnistbn.log" ;;
	*) echo "device_run.sh: unknown phase $p" >&2 ;;
	esac
done
