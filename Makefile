# Goluon: make test runs everything CI runs; make demo runs the main demo.
GO ?= go
RACE_PKGS = ./...

.PHONY: test demo fmt-check vet staticcheck unit race kernels mpi mpi-deps cudaemu cuda-build interop cuda-check cover bench bench-noise zoo-full onnx-deps onnx-check

test: fmt-check vet staticcheck onnx-deps unit race kernels mpi cudaemu cuda-build interop onnx-check

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# staticcheck (honnef.co/go/tools, fetched through the module proxy at a
# pinned version) on the default build; the cuda, cudaemu and mpi files
# hold code that only their own tags use.
STATICCHECK_VERSION = v0.8.2
staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

unit:
	$(GO) test -count=1 ./...

race:
	$(GO) test -race -count=1 $(RACE_PKGS)

# mpi builds with -tags mpi and runs the MPI tests, which launch 4-process
# jobs with mpirun on this machine; mpi-deps installs OpenMPI when missing.
mpi: mpi-deps
	$(GO) vet -tags mpi ./...
	$(GO) test -tags mpi -count=1 ./kvstore/...
	$(GO) test -tags mpi -count=1 -run DistSync ./tutorials/...

# onnx-deps installs ONNX's backend test data (Debian's libonnx-testdata),
# which gluon/onnx's TestBackendSuite runs.
onnx-deps:
	@[ -d /usr/share/libonnx-testdata/data/node ] || { echo "installing libonnx-testdata from Debian"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q libonnx-testdata >/dev/null; }

mpi-deps:
	@if ! command -v mpirun >/dev/null || ! pkg-config --exists ompi-c 2>/dev/null; then \
		echo "installing OpenMPI (libopenmpi-dev openmpi-bin pkg-config) from Debian"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q libopenmpi-dev openmpi-bin pkg-config >/dev/null; \
	fi

# kernels runs the CPU kernel and conformance tests once per instruction
# level (GOLUON_CPU=generic, avx2, avx512; nd/cpu/isa.go) and says loudly
# which levels this CPU cannot run.
kernels:
	@for l in generic avx2 avx512; do \
		got=$$(GOLUON_CPU=$$l $(GO) test -count=1 -run '^TestCPUFeatures$$' -v ./nd/cpu/ | sed -n 's/.*cpu kernels: \([a-z0-9]*\).*/\1/p'); \
		if [ "$$got" != "$$l" ]; then echo "*** SKIPPED: the kernel tests at GOLUON_CPU=$$l (this CPU runs $$got at most) ***"; continue; fi; \
		echo "kernel tests at GOLUON_CPU=$$l"; \
		GOLUON_CPU=$$l $(GO) test -count=1 ./nd/cpu/ ./nd/ || exit 1; \
		if [ $$l = avx2 ]; then \
			echo "kernel tests built with GOAMD64=v3 (where Go may fuse a*b+c into an FMA; the Go loops that promise the assembly kernels' bits must not let it)"; \
			GOAMD64=v3 $(GO) test -count=1 ./nd/cpu/ ./nd/ || exit 1; \
		fi; \
	done

# interop checks LeNet both ways against Debian's PyTorch (python3-torch,
# installed when missing): torch writes parameters and logits that Goluon
# must reproduce, and Goluon writes parameters and logits that torch must
# reproduce, all in a fresh directory (gluon/testdata/lenet_interop.py).
interop:
	@/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "installing python3-torch from Debian"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q python3-torch >/dev/null; }
	@d=$$(mktemp -d) && \
	/usr/bin/python3 gluon/testdata/lenet_interop.py write $$d && \
	GOLUON_INTEROP_DIR=$$d $(GO) test -count=1 -run 'LoadLeNetFromTorch|WriteLeNetForTorch' ./gluon/ && \
	/usr/bin/python3 gluon/testdata/lenet_interop.py check $$d/lenet_from_goluon.safetensors $$d/lenet_from_goluon.json; \
	rc=$$?; rm -rf $$d; exit $$rc

# onnx-check exports the round-trip tests' networks (LeNet, the Keras
# CIFAR CNN, an MLP, an Inception-style block, ResNet-18/50, MobileNetV2,
# VGG-11-BN, the ViT, transformer stacks, recurrent stacks, 1-D and
# transposed convolutions, MiniGoogLeNet, the char-lm GPT, nd/fft's
# transforms and the audio front-ends (DFT, STFT); several also in
# float16, bfloat16 and float64) into a fresh directory, runs ONNX's own
# checker on them (full check, strict shape inference; Debian's
# python3-onnx, installed when missing, checked through onnx.checker:
# libonnx-testdata's data directory alone makes `import onnx` succeed as
# an empty namespace package): tools/onnx_check.py; then runs each in ONNX
# Runtime (onnxruntime-node from npm, installed into ORT_DIR when missing,
# without its install script, which downloads GPU builds) and compares
# with the network's own output: tools/onnx_ort_check.js.
ORT_VERSION = 1.19.2
ORT_DIR ?= $(HOME)/.cache/goluon/onnxruntime-node-$(ORT_VERSION)

onnx-check:
	@/usr/bin/python3 -c 'import onnx.checker' 2>/dev/null || { echo "installing python3-onnx from Debian"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q python3-onnx >/dev/null; }
	@{ command -v node && command -v npm; } >/dev/null || { echo "installing nodejs and npm from Debian"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q nodejs npm >/dev/null; }
	@[ -f $(ORT_DIR)/node_modules/onnxruntime-node/package.json ] || { echo "installing onnxruntime-node $(ORT_VERSION) from npm into $(ORT_DIR)"; \
		npm install --prefix $(ORT_DIR) --no-audit --no-fund --ignore-scripts onnxruntime-node@$(ORT_VERSION) >/dev/null; }
	@d=$$(mktemp -d) && \
	GOLUON_ONNX_EXPORT_DIR=$$d $(GO) test -count=1 -run 'TestExportRoundTrip|TestExportONNX|TestExportMulti|TestBert.*ExportONNX' ./gluon/onnx/ ./gluon/model/vision/ ./gluon/model/text/ ./tutorials/char-lm/ ./tutorials/minigooglenet/ && \
	/usr/bin/python3 tools/onnx_check.py $$d/*.onnx && \
	NODE_PATH=$(ORT_DIR)/node_modules node tools/onnx_ort_check.js $$d; \
	rc=$$?; rm -rf $$d; exit $$rc

# zoo-full checks the model zoo at torchvision's full sizes (224x224
# inputs): make_fixtures.py writes torchvision's outputs with seeded random
# weights into a fresh directory (needs python3-torchvision, installed
# when missing) and the Go test compares (about 14 GB of temporary fixtures, minutes).
zoo-full:
	@/usr/bin/python3 -c 'import torchvision' 2>/dev/null || { echo "installing python3-torchvision from Debian"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q python3-torchvision >/dev/null; }
	@d=$$(mktemp -d) && /usr/bin/python3 gluon/model/vision/testdata/make_fixtures.py $$d full && \
	GOLUON_ZOO_FULL=$$d $(GO) test -count=1 -timeout 30m -run TestMatchesTorchvisionFull -v ./gluon/model/vision/; \
	rc=$$?; rm -rf $$d; exit $$rc

# cudaemu runs the CUDA backend's tests (conformance suite, gradient checks,
# allocator, copies, 2 virtual GPUs) on its host emulator: the kernels'
# CUDA C compiled as C++ (needs g++, installed from Debian when missing).
cudaemu:
	@command -v g++ >/dev/null || { SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q g++ >/dev/null; }
	GOLUON_VIRTUAL_GPUS=2 $(GO) test -short -count=1 -tags cudaemu ./cuda/ ./gluon/optimizer/ ./nd/linalg/ ./nd/npy/ ./nd/fft/

# cuda-build compiles and links the CUDA build (-tags cuda: the driver
# through cgo, cuBLAS/cuDNN/NCCL through dlopen) and vets it with its tests,
# against CUDA 11.8's cuda.h and libcuda link stub from Debian non-free
# (cuda/build-env.sh HEADERS_ONLY=1: nvidia-cuda-dev, ~770 MB, fetched into
# CUDA_DEB_PREFIX on first use). No GPU and no nvcc are needed.
CUDA_DEB_PREFIX ?= /opt/cuda-deb
cuda-build:
	@env_lines=$$(HEADERS_ONLY=1 NO_VERIFY=1 sh cuda/build-env.sh $(CUDA_DEB_PREFIX)) && eval "$$env_lines" && \
	$(GO) build -tags cuda ./... && $(GO) vet -tags cuda ./... && \
	$(GO) test -c -tags cuda -o /dev/null ./cuda/ && $(GO) test -c -tags cuda -o /dev/null ./gluon/ && \
	$(GO) build -tags cuda -o /dev/null ./tutorials/gluon-mnist && \
	echo "cuda-build: -tags cuda builds, links and vets"

# cuda-check builds the CUDA backend (-tags cuda) against Debian's CUDA
# headers, checks the committed PTX and runs the backend's tests on the host
# emulator (-tags cudaemu); it downloads the CUDA toolkit packages (~860 MB)
# on first use. It does not need a GPU; see cuda/README.md for the GPU runs.
cuda-check:
	sh cuda/check.sh

# demo trains LeNet on Fashion-MNIST over two CPU contexts (10 epochs); it
# installs or downloads the data set first when it is missing.
demo:
	$(GO) run ./tutorials/gluon-mnist -download

cover:
	$(GO) test -count=1 -coverprofile=cover.out ./... && $(GO) tool cover -func=cover.out | tail -1

# bench runs Goluon's CPU benchmarks and the same workloads in PyTorch side
# by side (REPS repetitions, default 3) and prints medians and ratios; it
# installs python3-torch and OpenBLAS from Debian when missing.
bench:
	bash bench/compare.sh

# bench-noise runs bench's pairs twice and prints how far the two medians
# of each row differ (on a quiet machine, within 10%).
bench-noise:
	bash bench/noise.sh
