#!/bin/sh
# check.sh - everything about the CUDA backend that can be checked on a
# machine without a GPU, and the test binaries to carry to one.
#
# usage: sh cuda/check.sh [BINDIR]      (from anywhere; default BINDIR /tmp/cuda-bins)
#
#   a. CUDA 11.8 headers, libcuda stub and nvcc from Debian non-free
#      (cuda/build-env.sh, into $CUDA_DEB_PREFIX, default /opt/cuda-deb)
#   b. go build / go vet with -tags cuda; the untagged build, vet and tests stay free of CUDA
#   c. regenerate the PTX from kernels/*.cu into a temporary directory and diff it with ptx/
#   d. assemble the committed PTX for sm_90 with ptxas
#   e. build -tags cuda test binaries (./cuda, ./gluon, ./tutorials/...) and the tutorial
#      programs into BINDIR
#   f. run the backend's tests on the host emulator (-tags cudaemu: the kernels compiled as
#      C++ and run on the CPU), on 2 virtual GPUs, and gluon's GPU equivalence test on 4;
#      CHECK_NO_EMU=1 skips this step
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bins=${1:-/tmp/cuda-bins}
tools=${CUDA_BUILD_ENV:-$here/build-env.sh}
prefix=${CUDA_DEB_PREFIX:-/opt/cuda-deb}
step() { printf '\n== %s\n' "$*"; }
cd "$root"

step "a. build environment ($tools $prefix)"
[ -f "$tools" ] || { echo "check.sh: $tools not found (set CUDA_BUILD_ENV)" >&2; exit 1; }
env_lines=$(NO_VERIFY=${NO_VERIFY:-1} sh "$tools" "$prefix")
eval "$env_lines"
nvcc --version | tail -1

step "b. go build / go vet, tagged and untagged"
unformatted=$(gofmt -l cuda gluon/cuda_import_test.go tutorials/internal/common/gpu_cuda.go)
[ -z "$unformatted" ] || { echo "gofmt needed: $unformatted" >&2; exit 1; }
go build -tags cuda ./...
go vet -tags cuda ./...
go vet -tags cudaemu ./cuda/ ./gluon/ ./tutorials/...
(
	unset CGO_CFLAGS CGO_LDFLAGS
	go build ./...
	go vet ./...
	go test ./cuda/...
	if go list -deps ./... | grep -q '^gorgonia.org/cu$'; then
		echo "the untagged build links gorgonia.org/cu" >&2
		exit 1
	fi
)
echo "tagged and untagged build and vet OK"

step "c. regenerate PTX and compare with the committed ptx/"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$here/gen.sh" "$tmp/ptx"
diff -r "$here/ptx" "$tmp/ptx"
echo "PTX up to date: $(ls "$here"/ptx/*.ptx | wc -l) modules, $(cat "$here"/ptx/*.ptx | grep -c '^\.visible \.entry') kernels"

step "d. ptxas -arch=sm_90 on the committed PTX"
for f in "$here"/ptx/*.ptx; do
	ptxas -arch=sm_90 "$f" -o "$tmp/$(basename "$f" .ptx).cubin"
done
echo "all PTX assembles for sm_90"

step "e. test binaries and programs (-tags cuda) into $bins"
mkdir -p "$bins"
ldflags="-s -w"
go test -c -tags cuda -ldflags="$ldflags" -o "$bins/cuda.test" ./cuda/
go test -c -tags cuda -ldflags="$ldflags" -o "$bins/gluon.test" ./gluon/
go test -c -tags cuda -ldflags="$ldflags" -o "$bins/optimizer.test" ./gluon/optimizer/
for d in tutorials/*/; do
	name=$(basename "$d")
	[ "$name" = internal ] && continue
	go test -c -tags cuda -ldflags="$ldflags" -o "$bins/$name.test" "./$d"
	go build -tags cuda -ldflags="$ldflags" -o "$bins/$name" "./$d"
done
ls -la "$bins"
for f in "$bins"/*; do
	if ldd "$f" 2>/dev/null | grep -v 'libcuda.so.1\|libc.so.6\|ld-linux\|linux-vdso\|libm.so\|libpthread\|libdl\|libresolv' | grep -q '=>'; then
		echo "unexpected shared library needed by $f:" >&2
		ldd "$f" >&2
		exit 1
	fi
done
echo "binaries need only libcuda.so.1 and libc (cuBLAS is dlopened at run time)"

if [ "${CHECK_NO_EMU:-0}" != 1 ]; then
	step "f. backend tests on the host emulator (-tags cudaemu)"
	GOLUON_VIRTUAL_GPUS=2 go test -short -count=1 -tags cudaemu ./cuda/ ./gluon/optimizer/
	GOLUON_EMU_GPUS=2 go test -short -count=1 -tags cudaemu -run 'Copy|Concurrent|Conformance' ./cuda/
	GOLUON_VIRTUAL_GPUS=4 go test -short -count=1 -tags cudaemu -run 'TestEquivalenceGPU' ./gluon/
fi

step "check.sh: all checks passed"
