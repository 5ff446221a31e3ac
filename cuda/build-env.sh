#!/bin/sh
# build-env.sh - fetch CUDA headers, the libcuda.so link stub and nvcc
# from Debian non-free into PREFIX, without touching the system apt config,
# and print the environment needed to build `go build -tags cuda` binaries.
#
# usage:  eval "$(sh cuda/build-env.sh [PREFIX])"      (default PREFIX=/opt/cuda-deb)
#
# env knobs:
#   CUDA_DEB_SUITE=bookworm  CUDA 11.8.89 from bookworm non-free (default)
#   CUDA_DEB_SUITE=trixie    CUDA 12.4.1 from trixie non-free (binaries run on bookworm;
#                            libcu++-dev comes from bookworm main for <nv/target>)
#   DEB_MIRROR=http://deb.debian.org/debian
#   KEEP_DEBS=1              keep the downloaded .debs under PREFIX/.apt/debs
#   FORCE=1                  re-download/re-extract even if PREFIX is complete
#   NO_VERIFY=1              skip the PTX + cgo smoke test
#   HEADERS_ONLY=1           only cuda.h and the libcuda stub (nvidia-cuda-dev), no nvcc:
#                            enough to compile and link `-tags cuda` (make cuda-build)
# Only the "export ..." lines go to stdout; progress goes to stderr.
# Needs: apt-get, dpkg-deb, tar, gcc (for cgo and as nvcc's host compiler).
set -eu

PREFIX=${1:-/opt/cuda-deb}
SUITE=${CUDA_DEB_SUITE:-bookworm}
MIRROR=${DEB_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
ARCH_LIB=x86_64-linux-gnu

log() { echo "cuda-build-env: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v apt-get >/dev/null || die "apt-get not found"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
command -v gcc >/dev/null || die "gcc not found (needed for cgo and as nvcc host compiler)"
[ -x "$(gcc -print-prog-name=cc1plus)" ] || die "g++ not installed (nvcc preprocesses .cu files as C++)"
[ "$(uname -m)" = x86_64 ] || die "only x86_64 is handled"

HEADERS=${HEADERS_ONLY:-0}
case "$SUITE" in
bookworm) PKGS="nvidia-cuda-toolkit/bookworm nvidia-cuda-dev/bookworm"
          SOURCES="deb [signed-by=$KEYRING] $MIRROR bookworm non-free" ;;
trixie)   PKGS="nvidia-cuda-toolkit/trixie nvidia-cuda-dev/trixie libcu++-dev/bookworm"
          SOURCES="deb [signed-by=$KEYRING] $MIRROR trixie non-free
deb [signed-by=$KEYRING] $MIRROR bookworm main" ;;
*) die "CUDA_DEB_SUITE must be bookworm or trixie" ;;
esac

if [ "$HEADERS" = 1 ]; then
	PKGS=$(printf '%s\n' $PKGS | grep -v '^nvidia-cuda-toolkit/' | tr '\n' ' ')
fi

mkdir -p "$PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
STAMP="$PREFIX/.cuda-build-env.$SUITE.done"
HSTAMP="$PREFIX/.cuda-build-env.$SUITE.headers.done"

if [ -f "$STAMP" ] && [ "${FORCE:-0}" != 1 ]; then
	log "already installed in $PREFIX ($SUITE); FORCE=1 to redo"
elif [ "$HEADERS" = 1 ] && [ -f "$HSTAMP" ] && [ "${FORCE:-0}" != 1 ]; then
	log "headers already installed in $PREFIX ($SUITE); FORCE=1 to redo"
else
	t0=$(date +%s)
	APTD="$PREFIX/.apt"
	rm -rf "$APTD/lists" "$APTD/debs"
	mkdir -p "$APTD/lists/partial" "$APTD/cache/archives/partial" "$APTD/debs"
	printf '%s\n' "$SOURCES" > "$APTD/sources.list"
	# private sources/lists/cache; ignore system sources.list.d and pinning
	set -- -q -o Dir::Etc::sourcelist="$APTD/sources.list" -o Dir::Etc::sourceparts=/dev/null \
		-o Dir::State::Lists="$APTD/lists" -o Dir::Cache="$APTD/cache" \
		-o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null \
		-o APT::Sandbox::User=root
	log "apt-get update (private lists in $APTD)"
	apt-get "$@" update >&2
	log "downloading: $PKGS"
	(cd "$APTD/debs" && apt-get "$@" download $PKGS >&2)
	t1=$(date +%s)
	log "download done in $((t1 - t0))s: $(du -sh "$APTD/debs" | cut -f1)"

	log "extracting headers + stubs from nvidia-cuda-dev (must decompress the whole package)"
	dpkg-deb --fsys-tarfile "$APTD"/debs/nvidia-cuda-dev_*.deb |
		tar -x -C "$PREFIX" --wildcards './usr/include/*' "./usr/lib/$ARCH_LIB/stubs/*"
	for d in "$APTD"/debs/libcu++-dev_*.deb; do if [ -f "$d" ]; then dpkg-deb -x "$d" "$PREFIX"; fi; done
fi
if [ "$HEADERS" = 1 ] && [ ! -f "$STAMP" ]; then
	[ -f "$HSTAMP" ] || { rm -rf "$PREFIX/.apt/debs" "$PREFIX/.apt/cache" "$PREFIX/.apt/lists"; touch "$HSTAMP"; log "headers installed in $(( $(date +%s) - t0 ))s"; }
elif [ ! -f "$STAMP" ] || [ "${FORCE:-0}" = 1 ]; then
	log "extracting nvidia-cuda-toolkit (nvcc, cicc, ptxas, libdevice)"
	dpkg-deb -x "$APTD"/debs/nvidia-cuda-toolkit_*.deb "$PREFIX"

	# Debian's nvcc.profile is a symlink to /etc/nvcc.profile with absolute
	# /usr paths; replace it with one relative to nvcc's own directory.
	rm -f "$PREFIX/usr/lib/nvidia-cuda-toolkit/bin/nvcc.profile"
	cat > "$PREFIX/usr/lib/nvidia-cuda-toolkit/bin/nvcc.profile" <<'EOF'
TOP                = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/libdevice
PATH              += $(_HERE_):$(TOP)/../../bin:
INCLUDES          += "-I$(TOP)/../../include" $(_SPACE_)
LIBRARIES         =+ $(_SPACE_) "-L$(TOP)/../x86_64-linux-gnu/stubs"
EOF

	# Host compiler for nvcc. CUDA 11.8 accepts gcc <= 11; bookworm ships gcc 12,
	# which works for device-only output (-ptx/-cubin/-fatbin) with
	# -allow-unsupported-compiler. CUDA 12.4 accepts gcc 12 as is.
	HOSTFLAGS="-ccbin $(command -v gcc)"
	if [ "$SUITE" = bookworm ]; then
		HOSTFLAGS="-ccbin $(command -v gcc) -allow-unsupported-compiler"
		for v in 11 10 9; do
			if command -v g++-$v >/dev/null 2>&1; then HOSTFLAGS="-ccbin $(command -v gcc-$v)"; break; fi
		done
	fi
	# Relocatable replacement for Debian's /usr/bin/nvcc (which execs an absolute /usr path).
	rm -f "$PREFIX/usr/bin/nvcc"
	cat > "$PREFIX/usr/bin/nvcc" <<EOF
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
hostflags="$HOSTFLAGS"
for a in "\$@"; do case "\$a" in -ccbin|-ccbin=*|--compiler-bindir*) hostflags="";; esac; done
exec "\$here/../lib/nvidia-cuda-toolkit/bin/nvcc" \$hostflags "\$@"
EOF
	chmod +x "$PREFIX/usr/bin/nvcc"

	[ "${KEEP_DEBS:-0}" = 1 ] || rm -rf "$APTD/debs"
	rm -rf "$APTD/cache" "$APTD/lists"
	touch "$STAMP"
	log "installed in $(( $(date +%s) - t0 ))s; size $(du -sh --exclude=.apt "$PREFIX" | cut -f1)"
fi

CFLAGS="-O2 -g -I$PREFIX/usr/include"
LDFLAGS="-O2 -g -L$PREFIX/usr/lib/$ARCH_LIB/stubs"

if [ "${NO_VERIFY:-0}" != 1 ] && [ "$HEADERS" != 1 ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	printf '%s\n' 'extern "C" __global__ void k(float* y, float a, int n) { int i = blockIdx.x*blockDim.x + threadIdx.x; if (i < n) y[i] *= a; }' > "$tmp/k.cu"
	for a in 80 90; do
		"$PREFIX/usr/bin/nvcc" -ptx -arch=compute_$a "$tmp/k.cu" -o "$tmp/k$a.ptx" >&2 || die "nvcc -arch=compute_$a failed"
		grep -q "^\.target sm_$a" "$tmp/k$a.ptx" || die "unexpected PTX target"
	done
	printf '%s\n' '#include <cuda.h>' 'int main(void) { int v = 0; (void)cuDriverGetVersion(&v); return CUDA_VERSION > 0 ? 0 : 1; }' > "$tmp/t.c"
	# shellcheck disable=SC2086
	gcc $CFLAGS "$tmp/t.c" -o "$tmp/t" $LDFLAGS -lcuda >&2 || die "cuda.h/libcuda stub test link failed"
	log "verified: $("$PREFIX/usr/bin/nvcc" --version | tail -1); PTX compute_80/compute_90 OK; cuda.h + -lcuda link OK (CUDA_VERSION $(grep -m1 '#define CUDA_VERSION' "$PREFIX/usr/include/cuda.h" | awk '{print $3}'))"
fi

cat <<EOF
export CUDA_DEB_ROOT="$PREFIX"
export PATH="$PREFIX/usr/bin:\$PATH"
export CGO_ENABLED=1
export CGO_CFLAGS="$CFLAGS"
export CGO_LDFLAGS="$LDFLAGS"
EOF
