// common.cuh: types and helpers shared by every kernel of the goluon CUDA
// backend. The parameter structs here are mirrored field for field by Go
// structs in cuda/params.go: change both together.
#pragma once

typedef long long i64;

// MAXD is the most dimensions a strided kernel handles after the host has
// dropped size-1 dimensions and merged contiguous ones.
#define MAXD 8

// Dims describes an iteration space of n dimensions and the element
// strides of up to three operands over it (row-major index order).
struct Dims {
	i64 n;
	i64 shape[MAXD];
	i64 st[3][MAXD];
};

// ReduceDims describes a reduction: the kept dimensions (their order is
// the output's row-major order), the outer reduced dimensions, and the
// innermost reduced run, all as strides into the contiguous source.
struct ReduceDims {
	i64 nk;
	i64 kshape[MAXD];
	i64 kst[MAXD];
	i64 nr;
	i64 rshape[MAXD];
	i64 rst[MAXD];
	i64 inN;
	i64 inSt;
	i64 nOut;
	i64 nRed;
};

// ConvDims describes a grouped, strided, dilated, padded NCHW convolution
// and the layout of its column (im2col) matrix for a chunk of nc images:
// element (image j, group g, row r, position p) of the column matrix sits
// at j*colN + g*colG + r*colR + p.
struct ConvDims {
	i64 inC, inH, inW;
	i64 outC, outH, outW;
	i64 kh, kw;
	i64 sh, sw;
	i64 ph, pw;
	i64 dh, dw;
	i64 groups;
	i64 nc;
	i64 colN, colG, colR;
};

// PoolDims describes 2-D NCHW pooling (see backend.PoolParams).
struct PoolDims {
	i64 type; // 0 max, 1 average
	i64 planes; // N*C
	i64 inH, inW, outH, outW;
	i64 kh, kw, sh, sw, ph, pw;
	i64 includePad;
};

// Grid-stride loop over [0, n).
#define GRID_LOOP(i, n) \
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)blockDim.x * gridDim.x)

// gmax and gmin follow Go's built-in max and min: a NaN argument gives NaN.
template <typename T> __device__ __forceinline__ T gmax(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	return a > b ? a : b;
}
template <typename T> __device__ __forceinline__ T gmin(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	return a < b ? a : b;
}

// stableSigmoid is 1/(1+e^-x) without overflow.
__device__ __forceinline__ double stableSigmoid(double x) {
	if (x >= 0) return 1.0 / (1.0 + exp(-x));
	double e = exp(x);
	return e / (1.0 + e);
}

// floorDiv divides rounding towards minus infinity (b > 0).
__device__ __forceinline__ i64 floorDiv(i64 a, i64 b) {
	i64 q = a / b;
	if ((a % b != 0) && (a < 0)) q--;
	return q;
}

// ceilDiv divides rounding towards plus infinity (b > 0).
__device__ __forceinline__ i64 ceilDiv(i64 a, i64 b) { return -floorDiv(-a, b); }
