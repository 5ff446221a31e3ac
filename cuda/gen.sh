#!/bin/sh
# gen.sh - compile the CUDA C kernels (kernels/*.cu) to PTX.
#
# usage: sh gen.sh [OUTDIR]      (default: ptx, next to this script)
#
# Run by `go generate -tags cuda ./cuda`. Needs nvcc on PATH, e.g. from
#   eval "$(sh cuda/build-env.sh /opt/cuda-deb)"
# (Debian's CUDA 11.8: PTX ISA 7.8 for compute_80, which the driver JITs for
# sm_80 and newer, H100 included). -fmad=false keeps the elementwise
# arithmetic rounding like the CPU backend's Go code.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/ptx}
command -v nvcc >/dev/null 2>&1 || {
	echo "gen.sh: nvcc not found; run: eval \"\$(sh cuda/build-env.sh /opt/cuda-deb)\"" >&2
	exit 1
}
mkdir -p "$out"
for src in "$here"/kernels/*.cu; do
	name=$(basename "$src" .cu)
	nvcc --ptx -arch=compute_80 -O3 -fmad=false -std=c++14 -I "$here/kernels" -o "$out/$name.ptx" "$src"
done
