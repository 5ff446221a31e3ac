// elementwise.cu: Fill, strided Copy, Unary, Binary and the row scaling
// used by Gemm when K == 0 (Cast is in cast.cu). Fill, Copy, Unary and
// Binary exist for every storage type: float32 (_f32), float64 (_f64),
// int32 (_i32), int64 (_i64) and uint8 (_u8, which Bool shares); Binary
// also with a u8 result (_f32_b ... _i64_b) for comparisons and logical
// ops into Bool. Arithmetic follows nd/cpu: on floats (elementwise.go) the
// ops the CPU computes in the element type are computed in it here too,
// the others in double and rounded once; on integers (intops.go) every op
// is computed in int64 with wrap-around and converted back, Div truncating
// toward zero with x/0 = 0.
#include "common.cuh"

// pyDivmod is Python's a // b and a % b for doubles (nd/cpu's divmod):
// the remainder has the divisor's sign; the quotient comes from the exact
// remainder, rounded to the nearest integer.
__device__ __forceinline__ void pyDivmod(double a, double b, double* q, double* r) {
	if (b == 0) { *q = a / b; *r = nan(""); return; }
	double m = fmod(a, b), d = (a - m) / b;
	if (m != 0) {
		if ((b < 0) != (m < 0)) { m += b; d -= 1; }
	} else {
		m = copysign(0.0, b);
	}
	*r = m;
	if (d == 0) { *q = copysign(0.0, a / b); return; }
	double f = floor(d);
	*q = d - f > 0.5 ? f + 1 : f;
}

template <typename T> __device__ __forceinline__ void fillImpl(T* d, i64 n, double v) {
	T tv = fromDouble<T>(v);
	GRID_LOOP(i, n) { d[i] = tv; }
}

template <typename T> __device__ __forceinline__ T unaryOp(int op, T x, double p1, double p2) {
	switch (op) {
	case U_NEG: return -x;
	case U_RELU: return x < (T)0 ? (T)0 : x; // −0 and NaN pass, as nd/cpu
	case U_MUL_SCALAR: return x * (T)p1;
	case U_ADD_SCALAR: return x + (T)p1;
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
	case U_RSUB_SCALAR: r = p1 - v; break;
	case U_RDIV_SCALAR: r = p1 / v; break;
	case U_POW_SCALAR: r = pow(v, p1); break;
	case U_RPOW_SCALAR: r = pow(p1, v); break;
	case U_CLIP: r = gmin(gmax(v, p1), p2); break;
	case U_MAX_SCALAR: r = gmax(v, p1); break;
	case U_MIN_SCALAR: r = gmin(v, p1); break;
	case U_STEP: r = v > 0 ? 1.0 : 0.0; break;
	case U_RSQRT: r = 1.0 / sqrt(v); break;
	case U_ERF: r = erf(v); break;
	case U_LOG1P: r = log1p(v); break;
	case U_EXPM1: r = expm1(v); break;
	case U_SIN: r = sin(v); break;
	case U_COS: r = cos(v); break;
	case U_RECIPROCAL: r = 1.0 / v; break;
	case U_LOGICAL_NOT: r = v == 0 ? 1.0 : 0.0; break;
	case U_FLOOR: r = floor(v); break;
	case U_CEIL: r = ceil(v); break;
	case U_ROUND: r = rint(v); break; // round to nearest, ties to even
	case U_TRUNC: r = trunc(v); break;
	case U_TAN: r = tan(v); break;
	case U_ASIN: r = asin(v); break;
	case U_ACOS: r = acos(v); break;
	case U_ATAN: r = atan(v); break;
	case U_SINH: r = sinh(v); break;
	case U_COSH: r = cosh(v); break;
	case U_ASINH: r = asinh(v); break;
	case U_ACOSH: r = acosh(v); break;
	case U_ATANH: r = atanh(v); break;
	case U_LOG2: r = log2(v); break;
	case U_LOG10: r = log10(v); break;
	case U_EXP2: r = exp2(v); break;
	case U_ERFINV: r = erfinv(v); break;
	case U_LGAMMA: r = lgamma(v); break;
	case U_DIGAMMA: r = digamma(v); break;
	case U_TRIGAMMA: r = trigamma(v); break;
	}
	return (T)r;
}

template <typename T> __device__ __forceinline__ T binaryOp(int op, T a, T b) {
	switch (op) {
	case B_ADD: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	case B_DIV: return a / b;
	case B_RELU_GRAD: return a > (T)0 ? b : (T)0;
	}
	double x = (double)a, y = (double)b, r = 0;
	switch (op) {
	case B_POW: r = pow(x, y); break;
	case B_MAXIMUM: r = gmax(x, y); break;
	case B_MINIMUM: r = gmin(x, y); break;
	case B_EQUAL: r = x == y ? 1.0 : 0.0; break;
	case B_NOT_EQUAL: r = x != y ? 1.0 : 0.0; break;
	case B_GREATER: r = x > y ? 1.0 : 0.0; break;
	case B_GREATER_EQUAL: r = x >= y ? 1.0 : 0.0; break;
	case B_LESS: r = x < y ? 1.0 : 0.0; break;
	case B_LESS_EQUAL: r = x <= y ? 1.0 : 0.0; break;
	case B_SIGMOID_GRAD: r = y * x * (1.0 - x); break;
	case B_TANH_GRAD: r = y * (1.0 - x * x); break;
	case B_SOFTRELU_GRAD: r = y * stableSigmoid(x); break;
	case B_LOGICAL_AND: r = (x != 0 && y != 0) ? 1.0 : 0.0; break;
	case B_LOGICAL_OR: r = (x != 0 || y != 0) ? 1.0 : 0.0; break;
	case B_LOGICAL_XOR: r = ((x != 0) != (y != 0)) ? 1.0 : 0.0; break;
	case B_FLOOR_DIV: { double m; pyDivmod(x, y, &r, &m); break; }
	case B_MOD: { double q; pyDivmod(x, y, &q, &r); break; }
	case B_FMOD: r = fmod(x, y); break;
	case B_ATAN2: r = atan2(x, y); break;
	case B_HYPOT: r = hypot(x, y); break;
	}
	return (T)r;
}

// intUnary is a unary op on an integer in int64 (nd/cpu/intops.go); the
// scalars are already converted to int64.
__device__ __forceinline__ i64 intUnary(int op, i64 x, i64 p1, i64 p2) {
	switch (op) {
	case U_NEG: return wrapSub(0, x);
	case U_RELU: return x > 0 ? x : 0;
	case U_ABS: return x < 0 ? wrapSub(0, x) : x;
	case U_SIGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
	case U_SQUARE: return wrapMul(x, x);
	case U_ADD_SCALAR: return wrapAdd(x, p1);
	case U_MUL_SCALAR: return wrapMul(x, p1);
	case U_RSUB_SCALAR: return wrapSub(p1, x);
	case U_CLIP: { i64 v = x > p1 ? x : p1; return v < p2 ? v : p2; }
	case U_MAX_SCALAR: return x > p1 ? x : p1;
	case U_MIN_SCALAR: return x < p1 ? x : p1;
	case U_STEP: return x > 0 ? 1 : 0;
	case U_LOGICAL_NOT: return x == 0 ? 1 : 0;
	case U_FLOOR: case U_CEIL: case U_ROUND: case U_TRUNC: return x; // integers are whole
	}
	return 0; // not defined on integers (nd refuses it)
}

// intBinary is a binary op on integers in int64 (nd/cpu/intops.go).
__device__ __forceinline__ i64 intBinary(int op, i64 a, i64 b) {
	switch (op) {
	case B_ADD: return wrapAdd(a, b);
	case B_SUB: return wrapSub(a, b);
	case B_MUL: return wrapMul(a, b);
	case B_DIV:
		if (b == 0) return 0;
		if (b == -1) return wrapSub(0, a); // MinInt64 / -1 wraps to MinInt64
		return a / b;
	case B_MAXIMUM: return a > b ? a : b;
	case B_MINIMUM: return a < b ? a : b;
	case B_EQUAL: return a == b;
	case B_NOT_EQUAL: return a != b;
	case B_GREATER: return a > b;
	case B_GREATER_EQUAL: return a >= b;
	case B_LESS: return a < b;
	case B_LESS_EQUAL: return a <= b;
	case B_LOGICAL_AND: return a != 0 && b != 0;
	case B_LOGICAL_OR: return a != 0 || b != 0;
	case B_LOGICAL_XOR: return (a != 0) != (b != 0);
	case B_FLOOR_DIV: case B_MOD: {
		if (b == 0) return 0;
		if (b == -1) return op == B_MOD ? 0 : wrapSub(0, a);
		i64 q = a / b, r = a % b;
		if (r != 0 && ((r < 0) != (b < 0))) { q -= 1; r += b; }
		return op == B_MOD ? r : q;
	}
	case B_FMOD: return (b == 0 || b == -1) ? 0 : a % b;
	}
	return 0; // not defined on integers (nd refuses it)
}

// elemUnary, elemBinary and elemBinaryBool pick the float or the integer
// arithmetic by the element type. elemBinaryBool is a binary op whose
// result goes to a Bool (u8) array: for floats, whether the op's value in
// double is non-zero; for integers, its int64 value's low byte (the
// comparisons and logical ops give 0 or 1 either way), as nd/cpu does.
#define ELEM_FLOAT(T)                                                                                     \
	__device__ __forceinline__ T elemUnary(int op, T x, double p1, double p2) {                        \
		return unaryOp<T>(op, x, p1, p2);                                                          \
	}                                                                                                   \
	__device__ __forceinline__ T elemBinary(int op, T a, T b) { return binaryOp<T>(op, a, b); }       \
	__device__ __forceinline__ u8 elemBinaryBool(int op, T a, T b) {                                   \
		return binaryOp<double>(op, (double)a, (double)b) != 0 ? 1 : 0;                           \
	}
#define ELEM_INT(T)                                                                                       \
	__device__ __forceinline__ T elemUnary(int op, T x, double p1, double p2) {                        \
		return (T)intUnary(op, (i64)x, floatToInt<i64>(p1), floatToInt<i64>(p2));                 \
	}                                                                                                   \
	__device__ __forceinline__ T elemBinary(int op, T a, T b) { return (T)intBinary(op, (i64)a, (i64)b); } \
	__device__ __forceinline__ u8 elemBinaryBool(int op, T a, T b) { return (u8)intBinary(op, (i64)a, (i64)b); }
ELEM_FLOAT(float)
ELEM_FLOAT(double)
ELEM_INT(int)
ELEM_INT(i64)
ELEM_INT(u8)

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

// BINARY defines the Binary kernels computing a D result with FN from two
// T operands.
#define BINARY(SUF, D, T, FN)                                                                        \
	extern "C" __global__ void binary_flat_##SUF(i64 op, D* d, const T* a, const T* b, i64 n) {     \
		GRID_LOOP(i, n) { d[i] = FN((int)op, a[i], b[i]); }                                     \
	}                                                                                                \
	/* dst is contiguous; st[0] and st[1] are a's and b's strides. */                               \
	extern "C" __global__ void binary_strided_##SUF(i64 op, D* d, const T* a, const T* b, i64 n,   \
	                                                Dims dims) {                                     \
		i64 off[3];                                                                              \
		GRID_LOOP(i, n) {                                                                        \
			stridedOffsets(dims, i, 2, off);                                                 \
			d[i] = FN((int)op, a[off[0]], b[off[1]]);                                        \
		}                                                                                        \
	}

// ELEMENTWISE defines the kernels every storage type has.
#define ELEMENTWISE(SUF, T)                                                                         \
	extern "C" __global__ void fill_##SUF(T* d, i64 n, double v) { fillImpl<T>(d, n, v); }         \
	extern "C" __global__ void unary_##SUF(i64 op, T* d, const T* x, i64 n, double p1, double p2) { \
		GRID_LOOP(i, n) { d[i] = elemUnary((int)op, x[i], p1, p2); }                            \
	}                                                                                                \
	BINARY(SUF, T, T, elemBinary)                                                                    \
	/* st[0] is dst's strides, st[1] src's. */                                                      \
	extern "C" __global__ void copy_strided_##SUF(T* d, const T* s, i64 n, Dims dims) {             \
		i64 off[3];                                                                              \
		GRID_LOOP(i, n) {                                                                        \
			stridedOffsets(dims, i, 2, off);                                                 \
			d[off[0]] = s[off[1]];                                                           \
		}                                                                                        \
	}

// Half-precision storage has Fill, Copy, Unary and Binary; the other ops
// compute on float32 copies (nd/half.go). HALF_ELEM's Unary and Binary
// decode each operand to float, compute as the float32 kernels do and
// round once: the bits of widening, the float32 kernel and rounding.
extern "C" __global__ void fill_f16(u16* d, i64 n, double v) {
	u16 h = floatToHalf((float)v);
	GRID_LOOP(i, n) { d[i] = h; }
}
extern "C" __global__ void fill_bf16(u16* d, i64 n, double v) {
	u16 h = floatToBf16((float)v);
	GRID_LOOP(i, n) { d[i] = h; }
}
extern "C" __global__ void copy_strided_u16(u16* d, const u16* s, i64 n, Dims dims) {
	i64 off[3];
	GRID_LOOP(i, n) {
		stridedOffsets(dims, i, 2, off);
		d[off[0]] = s[off[1]];
	}
}

#define HALF_ELEM(SUF, LOAD, STORE)                                                                    \
	extern "C" __global__ void unary_##SUF(i64 op, u16* d, const u16* x, i64 n, double p1, double p2) { \
		GRID_LOOP(i, n) { d[i] = STORE(elemUnary((int)op, LOAD(x[i]), p1, p2)); }                   \
	}                                                                                                   \
	__device__ __forceinline__ u16 halfBinary_##SUF(int op, u16 a, u16 b) {                           \
		return STORE(elemBinary(op, LOAD(a), LOAD(b)));                                             \
	}                                                                                                   \
	__device__ __forceinline__ u8 halfBinaryBool_##SUF(int op, u16 a, u16 b) {                        \
		return elemBinaryBool(op, LOAD(a), LOAD(b));                                                \
	}                                                                                                   \
	BINARY(SUF, u16, u16, halfBinary_##SUF)                                                             \
	BINARY(SUF##_b, u8, u16, halfBinaryBool_##SUF)
HALF_ELEM(f16, halfToFloat, floatToHalf)
HALF_ELEM(bf16, bf16ToFloat, floatToBf16)

// SCALE_ROWS defines Gemm's beta scaling (floats only).
#define SCALE_ROWS(SUF, T)                                                                          \
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
ELEMENTWISE(i32, int)
ELEMENTWISE(i64, i64)
ELEMENTWISE(u8, u8)
SCALE_ROWS(f32, float)
SCALE_ROWS(f64, double)
BINARY(f32_b, u8, float, elemBinaryBool)
BINARY(f64_b, u8, double, elemBinaryBool)
BINARY(i32_b, u8, int, elemBinaryBool)
BINARY(i64_b, u8, i64, elemBinaryBool)

// Fused optimizer updates (backend.OptimizerKernels): the update rule is a
// program (nd/backend/optprog.go), each step one of the elementwise ops
// (unaryOp, binaryOp) on five registers — weight, gradient, state and two
// temporaries — so every element goes through the composed steps in their
// order and types and the result equals the composed ops' and the CPU's
// bit for bit. A step's code holds its kind (0 unary, 1 binary) in bits
// 0–7, the U_ or B_ op in 8–15 and the registers D, A, B in 16–23, 24–31
// and 32–39. s is null when the program keeps no state.
#define OPT_MAX_STEPS 16
struct OptStep {
	i64 code;
	double s1, s2;
};
struct OptProgram {
	i64 n;
	OptStep step[OPT_MAX_STEPS];
};
#define OPT_UPDATE(SUF, T)                                                                          \
	extern "C" __global__ void opt_update_##SUF(T* w, const T* g, T* s, i64 n, OptProgram p) {     \
		GRID_LOOP(i, n) {                                                                        \
			T r[5] = {w[i], g[i], s ? s[i] : (T)0, (T)0, (T)0};                              \
			for (int k = 0; k < p.n; k++) {                                                  \
				const i64 c = p.step[k].code;                                            \
				const int op = (c >> 8) & 255, d = (c >> 16) & 255;                      \
				const int a = (c >> 24) & 255, b = (c >> 32) & 255;                      \
				r[d] = (c & 255) ? binaryOp<T>(op, r[a], r[b])                           \
						 : unaryOp<T>(op, r[a], p.step[k].s1, p.step[k].s2);     \
			}                                                                                \
			w[i] = r[0];                                                                     \
			if (s) s[i] = r[2];                                                              \
		}                                                                                        \
	}
OPT_UPDATE(f32, float)
OPT_UPDATE(f64, double)

// dropout_mask (backend.DropoutKernels): keep where the value's 32 bits of
// splitmix64(seed + i/2) (low half for even i, high for odd) are at least
// thr, else 0, as nd's host mask.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long x) {
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}
#define DROPOUT(SUF, T)                                                                             \
	extern "C" __global__ void dropout_mask_##SUF(T* d, i64 n, i64 seed, i64 thr, double keep) {    \
		GRID_LOOP(i, n) {                                                                        \
			unsigned long long u = splitmix64((unsigned long long)seed + (unsigned long long)(i / 2)); \
			unsigned int bits = (i & 1) ? (unsigned int)(u >> 32) : (unsigned int)u;        \
			d[i] = bits >= (unsigned int)thr ? (T)keep : (T)0;                                \
		}                                                                                        \
	}
DROPOUT(f32, float)
DROPOUT(f64, double)

// bias_relu (backend.BiasReluKernels): y = relu(x + b[c]) over [outer, C,
// inner], the sum rounded to T and a negative one made 0 (−0 and NaN pass
// through), as nd/cpu's fused kernel.
#define BIASRELU(SUF, T)                                                                            \
	extern "C" __global__ void bias_relu_##SUF(T* y, const T* x, const T* b, i64 n, i64 c, i64 inner) { \
		GRID_LOOP(i, n) {                                                                        \
			T v = x[i] + b[(i / inner) % c];                                                 \
			y[i] = v < (T)0 ? (T)0 : v;                                                      \
		}                                                                                        \
	}
BIASRELU(f32, float)
BIASRELU(f64, double)
