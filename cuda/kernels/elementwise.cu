// elementwise.cu: Fill, Cast, strided Copy, Unary, Binary and the row
// scaling used by Gemm when K == 0. Each kernel exists for float32 (_f32)
// and float64 (_f64). Arithmetic follows nd/cpu/elementwise.go: the ops the
// CPU computes in the element type are computed in it here too, the others
// in double and rounded once.
#include "common.cuh"

// Unary op codes; cuda/kernels.go maps backend.UnaryOp onto them.
enum {
	U_NEG, U_EXP, U_LOG, U_SQRT, U_TANH, U_SIGMOID, U_RELU, U_ABS, U_SIGN,
	U_SQUARE, U_SOFTRELU, U_ADDS, U_MULS, U_RSUBS, U_RDIVS, U_POWS, U_RPOWS,
	U_CLIP, U_MAXS, U_MINS, U_STEP, U_RSQRT, U_ERF, U_LOG1P, U_EXPM1, U_SIN, U_COS,
	U_RECIP
};

// Binary op codes; cuda/kernels.go maps backend.BinaryOp onto them.
enum {
	B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAXIMUM, B_MINIMUM, B_EQ, B_NE,
	B_GT, B_GE, B_LT, B_LE, B_RELUGRAD, B_SIGMOIDGRAD, B_TANHGRAD,
	B_SOFTRELUGRAD
};

template <typename T> __device__ __forceinline__ void fillImpl(T* d, i64 n, double v) {
	T tv = (T)v;
	GRID_LOOP(i, n) { d[i] = tv; }
}

template <typename T> __device__ __forceinline__ T unaryOp(int op, T x, double p1, double p2) {
	switch (op) {
	case U_NEG: return -x;
	case U_RELU: return gmax(x, (T)0);
	case U_MULS: return x * (T)p1;
	case U_ADDS: return x + (T)p1;
	}
	double v = (double)x, r = 0;
	switch (op) {
	case U_EXP: r = exp(v); break;
	case U_LOG: r = log(v); break;
	case U_SQRT: r = sqrt(v); break;
	case U_TANH: r = tanh(v); break;
	case U_SIGMOID: r = stableSigmoid(v); break;
	case U_ABS: r = fabs(v); break;
	case U_SIGN: r = v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); break;
	case U_SQUARE: r = v * v; break;
	case U_SOFTRELU: r = v > 0 ? v + log1p(exp(-v)) : log1p(exp(v)); break;
	case U_RSUBS: r = p1 - v; break;
	case U_RDIVS: r = p1 / v; break;
	case U_POWS: r = pow(v, p1); break;
	case U_RPOWS: r = pow(p1, v); break;
	case U_CLIP: r = gmin(gmax(v, p1), p2); break;
	case U_MAXS: r = gmax(v, p1); break;
	case U_MINS: r = gmin(v, p1); break;
	case U_STEP: r = v > 0 ? 1.0 : 0.0; break;
	case U_RSQRT: r = 1.0 / sqrt(v); break;
	case U_ERF: r = erf(v); break;
	case U_LOG1P: r = log1p(v); break;
	case U_EXPM1: r = expm1(v); break;
	case U_SIN: r = sin(v); break;
	case U_COS: r = cos(v); break;
	case U_RECIP: r = 1.0 / v; break;
	}
	return (T)r;
}

template <typename T> __device__ __forceinline__ T binaryOp(int op, T a, T b) {
	switch (op) {
	case B_ADD: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	case B_DIV: return a / b;
	case B_RELUGRAD: return a > (T)0 ? b : (T)0;
	}
	double x = (double)a, y = (double)b, r = 0;
	switch (op) {
	case B_POW: r = pow(x, y); break;
	case B_MAXIMUM: r = gmax(x, y); break;
	case B_MINIMUM: r = gmin(x, y); break;
	case B_EQ: r = x == y ? 1.0 : 0.0; break;
	case B_NE: r = x != y ? 1.0 : 0.0; break;
	case B_GT: r = x > y ? 1.0 : 0.0; break;
	case B_GE: r = x >= y ? 1.0 : 0.0; break;
	case B_LT: r = x < y ? 1.0 : 0.0; break;
	case B_LE: r = x <= y ? 1.0 : 0.0; break;
	case B_SIGMOIDGRAD: r = y * x * (1.0 - x); break;
	case B_TANHGRAD: r = y * (1.0 - x * x); break;
	case B_SOFTRELUGRAD: r = y * stableSigmoid(x); break;
	}
	return (T)r;
}

// stridedOffsets maps the row-major index i of d's iteration space to the
// element offsets of the first k operands.
__device__ __forceinline__ void stridedOffsets(const Dims& d, i64 i, int k, i64* off) {
	off[0] = 0;
	off[1] = 0;
	off[2] = 0;
	for (int j = (int)d.n - 1; j >= 0; j--) {
		i64 s = d.shape[j];
		i64 idx = i % s;
		i /= s;
		for (int o = 0; o < k; o++) off[o] += idx * d.st[o][j];
	}
}

#define ELEMENTWISE(SUF, T)                                                                         \
	extern "C" __global__ void fill_##SUF(T* d, i64 n, double v) { fillImpl<T>(d, n, v); }         \
	extern "C" __global__ void unary_##SUF(i64 op, T* d, const T* x, i64 n, double p1, double p2) { \
		GRID_LOOP(i, n) { d[i] = unaryOp<T>((int)op, x[i], p1, p2); }                           \
	}                                                                                                \
	extern "C" __global__ void binary_flat_##SUF(i64 op, T* d, const T* a, const T* b, i64 n) {     \
		GRID_LOOP(i, n) { d[i] = binaryOp<T>((int)op, a[i], b[i]); }                            \
	}                                                                                                \
	/* dst is contiguous; st[0] and st[1] are a's and b's strides. */                               \
	extern "C" __global__ void binary_strided_##SUF(i64 op, T* d, const T* a, const T* b, i64 n,   \
	                                                Dims dims) {                                     \
		i64 off[3];                                                                              \
		GRID_LOOP(i, n) {                                                                        \
			stridedOffsets(dims, i, 2, off);                                                 \
			d[i] = binaryOp<T>((int)op, a[off[0]], b[off[1]]);                               \
		}                                                                                        \
	}                                                                                                \
	/* st[0] is dst's strides, st[1] src's. */                                                      \
	extern "C" __global__ void copy_strided_##SUF(T* d, const T* s, i64 n, Dims dims) {             \
		i64 off[3];                                                                              \
		GRID_LOOP(i, n) {                                                                        \
			stridedOffsets(dims, i, 2, off);                                                 \
			d[off[0]] = s[off[1]];                                                           \
		}                                                                                        \
	}                                                                                                \
	/* c[b*strideC + i*ldc + j] *= beta for a batch of m x n matrices (0 when beta is 0). */        \
	extern "C" __global__ void scale_rows_##SUF(T* c, i64 batch, i64 m, i64 n, i64 ldc,             \
	                                            i64 strideC, double beta) {                         \
		i64 per = m * n;                                                                         \
		T tb = (T)beta;                                                                          \
		GRID_LOOP(i, batch * per) {                                                              \
			i64 bi = i / per, r = (i % per) / n, col = i % n;                                \
			T* p = c + bi * strideC + r * ldc + col;                                         \
			*p = beta == 0 ? (T)0 : *p * tb;                                                 \
		}                                                                                        \
	}

ELEMENTWISE(f32, float)
ELEMENTWISE(f64, double)

extern "C" __global__ void cast_f32_f64(double* d, const float* s, i64 n) {
	GRID_LOOP(i, n) { d[i] = (double)s[i]; }
}

extern "C" __global__ void cast_f64_f32(float* d, const double* s, i64 n) {
	GRID_LOOP(i, n) { d[i] = (float)s[i]; }
}
