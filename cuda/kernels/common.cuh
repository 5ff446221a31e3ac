// common.cuh: types and helpers shared by every kernel of the goluon CUDA
// backend. The op codes and the parameter structs are generated
// (cuda/internal/gencodes) together with their Go side.
#pragma once

#include "opcodes.cuh" // the op codes and dtype codes, generated from nd/backend

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned char u8;
typedef unsigned short u16; // Float16 and BFloat16 storage: their bits

#include "params.cuh" // the parameter structs, generated with cuda/params_gen.go

// f32bits and bitsF32 reinterpret a float's bits.
__device__ __forceinline__ unsigned int f32bits(float f) {
	union { float f; unsigned int u; } c;
	c.f = f;
	return c.u;
}
__device__ __forceinline__ float bitsF32(unsigned int u) {
	union { float f; unsigned int u; } c;
	c.u = u;
	return c.f;
}

// halfToFloat decodes an IEEE binary16 value exactly (backend.F16.Float32).
__device__ __forceinline__ float halfToFloat(u16 h) {
	unsigned int sign = (unsigned int)(h & 0x8000) << 16;
	unsigned int exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
	if (exp == 0x1f) return bitsF32(sign | 0x7f800000u | (frac << 13));
	if (exp != 0) return bitsF32(sign | ((exp + 112) << 23) | (frac << 13));
	float v = (float)frac * (1.0f / 16777216.0f); // a subnormal: frac·2⁻²⁴, exact
	return sign ? -v : v;
}

// floatToHalf rounds f to binary16, to nearest even, as backend.F16From:
// overflow to ±Inf, NaN quieted keeping its top payload bits, subnormals
// kept.
__device__ __forceinline__ u16 floatToHalf(float f) {
	unsigned int b = f32bits(f);
	unsigned int sign = (b >> 16) & 0x8000;
	int exp = (int)((b >> 23) & 0xff);
	unsigned int frac = b & 0x7fffff;
	if (exp == 0xff) return (u16)(frac == 0 ? (sign | 0x7c00) : (sign | 0x7e00 | (frac >> 13)));
	if (exp > 127 + 15) return (u16)(sign | 0x7c00);
	if (exp >= 127 - 14) {
		unsigned int v = ((unsigned int)(exp - 127 + 15) << 10) | (frac >> 13);
		unsigned int rest = frac & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (v & 1))) v++;
		return (u16)(sign | v);
	}
	if (exp >= 127 - 25) {
		unsigned int m = frac | 0x800000;
		unsigned int shift = (unsigned int)(126 - 14 - exp + 13 + 1);
		unsigned int v = m >> shift;
		unsigned int rest = m & ((1u << shift) - 1);
		unsigned int half = 1u << (shift - 1);
		if (rest > half || (rest == half && (v & 1))) v++;
		return (u16)(sign | v);
	}
	return (u16)sign;
}

// bf16ToFloat decodes a bfloat16 value (its bits are a float's top half).
__device__ __forceinline__ float bf16ToFloat(u16 h) { return bitsF32((unsigned int)h << 16); }

// floatToBf16 rounds f to bfloat16, to nearest even, as backend.BF16From.
__device__ __forceinline__ u16 floatToBf16(float f) {
	unsigned int b = f32bits(f);
	if ((b & 0x7fffffffu) > 0x7f800000u) return (u16)((b >> 16) | 0x40);
	return (u16)((b + 0x7fffu + ((b >> 16) & 1)) >> 16);
}


// hf16 and hbf16 are half storage as a value type for the templated
// kernels: a load decodes to float, a store rounds to the half type from
// float (a double is rounded to float first), so a kernel instantiated on
// them gives the bits of its float32 instance followed by a rounding to
// half (nd's widened path).
#define HALF_STORAGE(NAME, DEC, ENC)                                                        \
	struct NAME {                                                                       \
		u16 v;                                                                      \
		__device__ __forceinline__ NAME() {}                                        \
		__device__ __forceinline__ NAME(float f) : v(ENC(f)) {}                     \
		__device__ __forceinline__ NAME(double d) : v(ENC((float)d)) {}             \
		__device__ __forceinline__ operator float() const { return DEC(v); }        \
	};
HALF_STORAGE(hf16, halfToFloat, floatToHalf)
HALF_STORAGE(hbf16, bf16ToFloat, floatToBf16)

// Grid-stride loop over [0, n).
#define GRID_LOOP(i, n) \
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)blockDim.x * gridDim.x)

// gmax and gmin follow Go's built-in max and min: a NaN argument gives NaN,
// and of two zeros max is +0 unless both are −0, min −0 unless both are +0.
template <typename T> __device__ __forceinline__ T gmax(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return a == 0 && 1.0 / (double)a < 0 ? b : a; // a is −0
	return a > b ? a : b;
}
template <typename T> __device__ __forceinline__ T gmin(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return a == 0 && 1.0 / (double)a < 0 ? a : b;
	return a < b ? a : b;
}

// stableSigmoid is 1/(1+e^-x) without overflow.
__device__ __forceinline__ double stableSigmoid(double x) {
	if (x >= 0) return 1.0 / (1.0 + exp(-x));
	double e = exp(x);
	return e / (1.0 + e);
}

// digamma is ψ(x) as nd/cpu/special.go computes it (the same steps, so
// the backends agree): the reflection below 0, the recurrence up to 10,
// then the asymptotic series.
__device__ __forceinline__ double digamma(double x) {
	const double pi = 3.14159265358979323846;
	if (x == 0) return -HUGE_VAL;
	double r = 0;
	if (x < 0) {
		if (x == floor(x)) return NAN;
		r = -pi / tan(pi * (x - rint(x))); // tan has period π: reduce first, exactly
		x = 1 - x;
	}
	while (x < 10) {
		r -= 1 / x;
		x += 1;
	}
	double f = 1 / (x * x);
	double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
	return r + log(x) - 0.5 / x + t;
}

// trigamma is ψ'(x) as nd/cpu/special.go computes it.
__device__ __forceinline__ double trigamma(double x) {
	const double pi = 3.14159265358979323846;
	double sign = 1, r = 0;
	if (x <= 0) {
		if (x == floor(x)) return HUGE_VAL;
		double s = sin(pi * (x - rint(x))); // sin² has period π
		r = pi * pi / (s * s);
		sign = -1;
		x = 1 - x;
	}
	double acc = 0;
	while (x < 10) {
		acc += 1 / (x * x);
		x += 1;
	}
	double f = 1 / (x * x);
	double t = 1 / x + f / 2 + f / x * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 + f * (5.0 / 66 + f * (-691.0 / 2730 + f * 7.0 / 6))))));
	return r + sign * (acc + t);
}

// floorDiv divides rounding towards minus infinity (b > 0).
__device__ __forceinline__ i64 floorDiv(i64 a, i64 b) {
	i64 q = a / b;
	if ((a % b != 0) && (a < 0)) q--;
	return q;
}

// ceilDiv divides rounding towards plus infinity (b > 0).
__device__ __forceinline__ i64 ceilDiv(i64 a, i64 b) { return -floorDiv(-a, b); }

// Wrap-around int64 arithmetic, as Go's: computed in u64, since signed
// overflow is undefined in C++.
__device__ __forceinline__ i64 wrapAdd(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ __forceinline__ i64 wrapSub(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
__device__ __forceinline__ i64 wrapMul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }

// Limits of the integer element types: the smallest and largest values as
// doubles (the largest int64 rounds up to 2^63, as in nd/cpu) and the
// largest value itself.
template <typename T> struct IntLimits;
template <> struct IntLimits<int> {
	static __device__ __forceinline__ double lo() { return -2147483648.0; }
	static __device__ __forceinline__ double hi() { return 2147483647.0; }
	static __device__ __forceinline__ int maxv() { return 2147483647; }
};
template <> struct IntLimits<i64> {
	static __device__ __forceinline__ double lo() { return -9223372036854775808.0; }
	static __device__ __forceinline__ double hi() { return 9223372036854775808.0; }
	static __device__ __forceinline__ i64 maxv() { return 0x7fffffffffffffffLL; }
};
template <> struct IntLimits<u8> {
	static __device__ __forceinline__ double lo() { return 0.0; }
	static __device__ __forceinline__ double hi() { return 255.0; }
	static __device__ __forceinline__ u8 maxv() { return 255; }
};

// isFloat<T>::value is true for float and double.
template <typename T> struct isFloat { enum { value = 0 }; };
template <> struct isFloat<float> { enum { value = 1 }; };
template <> struct isFloat<double> { enum { value = 1 }; };

// floatToInt converts a double to the integer type T as nd/cpu's Cast
// does: truncation toward zero, saturating at T's range, NaN becoming 0.
template <typename T> __device__ __forceinline__ T floatToInt(double v) {
	double f = trunc(v);
	if (f != f) return (T)0;
	if (f >= IntLimits<T>::hi()) return IntLimits<T>::maxv();
	if (f <= IntLimits<T>::lo()) return (T)(i64)IntLimits<T>::lo();
	return (T)(i64)f;
}

// fromDouble converts a double scalar (Fill's value, OneHot's on and off)
// to the element type T as Cast converts a float64.
template <typename T> __device__ __forceinline__ T fromDouble(double v) { return floatToInt<T>(v); }
template <> __device__ __forceinline__ float fromDouble<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ double fromDouble<double>(double v) { return v; }

// convert converts one element from S to D as Cast does: floats to
// integers by floatToInt, everything else as C converts (integers narrow
// with wrap-around, integers to floats round to nearest).
template <typename D, typename S> __device__ __forceinline__ D convert(S v) {
	if (isFloat<S>::value && !isFloat<D>::value) return fromDouble<D>((double)v);
	return (D)v;
}

// loadIndex reads element i of an index array of dtype code dt as an
// integer: floats truncated and saturated (NaN is 0), Bool 0 or 1.
__device__ __forceinline__ i64 loadIndex(const void* p, i64 dt, i64 i) {
	switch (dt) {
	case DT_FLOAT32: return floatToInt<i64>((double)((const float*)p)[i]);
	case DT_FLOAT64: return floatToInt<i64>(((const double*)p)[i]);
	case DT_INT32: return (i64)((const int*)p)[i];
	case DT_INT64: return ((const i64*)p)[i];
	}
	return (i64)((const u8*)p)[i];
}

// loadFloat reads element i of an array of the floating dtype code dt.
__device__ __forceinline__ double loadFloat(const void* p, i64 dt, i64 i) {
	return dt == DT_FLOAT64 ? ((const double*)p)[i] : (double)((const float*)p)[i];
}

// storeAs writes the integer v (an index) into element i of an array of
// dtype code dt, converting as C converts (Bool, like u8, keeps the low
// byte, as nd/cpu does).
__device__ __forceinline__ void storeAs(void* p, i64 dt, i64 i, i64 v) {
	switch (dt) {
	case DT_FLOAT32: ((float*)p)[i] = (float)v; return;
	case DT_FLOAT64: ((double*)p)[i] = (double)v; return;
	case DT_INT32: ((int*)p)[i] = (int)v; return;
	case DT_INT64: ((i64*)p)[i] = v; return;
	}
	((u8*)p)[i] = (u8)v;
}
