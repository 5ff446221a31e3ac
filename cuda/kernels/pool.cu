// pool.cu: 2-D max and average pooling, forward and backward, with the
// window rules of nd/cpu/pool.go: windows clipped to the input, the
// average's divisor counting the padding (clipped to the padded input) only
// with includePad, and max pooling's gradient going to the first maximum of
// each window in row-major order. The backward pass gathers (one thread per
// input element, no atomics), adding window contributions in the CPU's
// order, so it is deterministic.
#include "common.cuh"

// window gives the input range [lo, hi) covered by output position o and
// the padded extent used by includePad.
__device__ __forceinline__ void window(i64 o, i64 stride, i64 pad, i64 k, i64 in, i64& lo, i64& hi, i64& padded) {
	i64 start = o * stride - pad;
	i64 end = start + k < in + pad ? start + k : in + pad;
	padded = end - start;
	lo = start > 0 ? start : 0;
	hi = end < in ? end : in;
}

__device__ __forceinline__ i64 avgDivisor(const PoolDims& p, i64 h, i64 w, i64 ph, i64 pw) {
	if (p.includePad) return ph * pw;
	i64 n = h * w;
	return n > 1 ? n : 1;
}

// windowArgMax returns the input index (within a plane) of the first
// maximum of output (oh, ow)'s window, or -1 for an empty window.
template <typename T> __device__ __forceinline__ i64 windowArgMax(const PoolDims& p, const T* xp, i64 oh, i64 ow) {
	i64 h0, h1, ph, w0, w1, pw;
	window(oh, p.sh, p.ph, p.kh, p.inH, h0, h1, ph);
	window(ow, p.sw, p.pw, p.kw, p.inW, w0, w1, pw);
	double best = 0;
	i64 at = -1;
	for (i64 ih = h0; ih < h1; ih++) {
		for (i64 iw = w0; iw < w1; iw++) {
			double v = (double)xp[ih * p.inW + iw];
			if (v > best || at < 0) {
				best = v;
				at = ih * p.inW + iw;
			}
		}
	}
	return at;
}

template <typename T> __device__ __forceinline__ void poolForward(const PoolDims& p, T* y, const T* x) {
	const double inf = __longlong_as_double(0x7ff0000000000000LL);
	i64 outPlane = p.outH * p.outW;
	GRID_LOOP(t, p.planes * outPlane) {
		i64 pl = t / outPlane, oh = (t % outPlane) / p.outW, ow = t % p.outW;
		const T* xp = x + pl * p.inH * p.inW;
		i64 h0, h1, ph, w0, w1, pw;
		window(oh, p.sh, p.ph, p.kh, p.inH, h0, h1, ph);
		window(ow, p.sw, p.pw, p.kw, p.inW, w0, w1, pw);
		if (p.typ == 0) {
			double m = -inf;
			for (i64 ih = h0; ih < h1; ih++)
				for (i64 iw = w0; iw < w1; iw++) m = gmax(m, (double)xp[ih * p.inW + iw]);
			y[t] = (T)m;
			continue;
		}
		double s = 0;
		for (i64 ih = h0; ih < h1; ih++)
			for (i64 iw = w0; iw < w1; iw++) s += (double)xp[ih * p.inW + iw];
		y[t] = (T)(s / (double)avgDivisor(p, h1 - h0, w1 - w0, ph, pw));
	}
}

// floorDivI and ceilDivI divide rounding towards minus and plus infinity
// (b > 0) in the index type I.
template <typename I> __device__ __forceinline__ I floorDivI(I a, I b) {
	I q = a / b;
	if ((a % b != 0) && (a < 0)) q--;
	return q;
}
template <typename I> __device__ __forceinline__ I ceilDivI(I a, I b) { return -floorDivI<I>(-a, b); }

// PoolAcc is the type a backward pass sums in: T itself, float for half
// storage (as the float32 kernel sums before nd rounds the result).
template <typename T> struct PoolAcc { typedef T A; };
template <> struct PoolAcc<hf16> { typedef float A; };
template <> struct PoolAcc<hbf16> { typedef float A; };

// poolBackward computes dx, one thread per input element gathering from the
// windows that contain it, with its index arithmetic in I (int where every
// index fits: 64-bit division costs a GPU tens of instructions). It does
// not read the forward's output, which may have been written since.
template <typename T, typename I>
__device__ __forceinline__ void poolBackwardI(const PoolDims& p, T* dx, const T* x, const T* dy) {
	const I inH = (I)p.inH, inW = (I)p.inW, outH = (I)p.outH, outW = (I)p.outW;
	const I kh = (I)p.kh, kw = (I)p.kw, sh = (I)p.sh, sw = (I)p.sw, ph = (I)p.ph, pw = (I)p.pw;
	const I inPlane = inH * inW, outPlane = outH * outW;
	GRID_LOOP(t64, p.planes * p.inH * p.inW) {
		const I t = (I)t64;
		const I pl = t / inPlane, r = t - pl * inPlane, ih = r / inW, iw = r - ih * inW;
		const T* xp = x + (i64)pl * inPlane;
		const T* dyp = dy + (i64)pl * outPlane;
		// Windows containing ih: oh*sh - ph <= ih < oh*sh - ph + kh.
		I oh0 = ceilDivI<I>(ih + ph - kh + 1, sh), oh1 = floorDivI<I>(ih + ph, sh);
		I ow0 = ceilDivI<I>(iw + pw - kw + 1, sw), ow1 = floorDivI<I>(iw + pw, sw);
		if (oh0 < 0) oh0 = 0;
		if (ow0 < 0) ow0 = 0;
		if (oh1 > outH - 1) oh1 = outH - 1;
		if (ow1 > outW - 1) ow1 = outW - 1;
		typedef typename PoolAcc<T>::A A;
		A acc = 0;
		for (I oh = oh0; oh <= oh1; oh++) {
			for (I ow = ow0; ow <= ow1; ow++) {
				A g = (A)dyp[oh * outW + ow];
				if (p.typ == 0) {
					if (windowArgMax<T>(p, xp, oh, ow) == (i64)r) acc += g;
					continue;
				}
				i64 h0, h1, hp, w0, w1, wp;
				window(oh, p.sh, p.ph, p.kh, p.inH, h0, h1, hp);
				window(ow, p.sw, p.pw, p.kw, p.inW, w0, w1, wp);
				acc += g / (A)avgDivisor(p, h1 - h0, w1 - w0, hp, wp);
			}
		}
		dx[t64] = (T)acc;
	}
}

template <typename T> __device__ __forceinline__ void poolBackward(const PoolDims& p, T* dx, const T* x, const T* dy) {
	const i64 big = 1LL << 30; // every index, and every sum of two, below 2^31
	if (p.planes * p.inH * p.inW < big && p.planes * p.outH * p.outW < big && p.inH + p.ph + p.kh < big &&
		p.inW + p.pw + p.kw < big && p.sh < big && p.sw < big)
		poolBackwardI<T, int>(p, dx, x, dy);
	else
		poolBackwardI<T, i64>(p, dx, x, dy);
}

#define POOL(SUF, T)                                                                                  \
	extern "C" __global__ void pool_forward_##SUF(PoolDims p, T* y, const T* x) {                    \
		poolForward<T>(p, y, x);                                                                  \
	}                                                                                                 \
	extern "C" __global__ void pool_backward_##SUF(PoolDims p, T* dx, const T* x, const T* dy) {     \
		poolBackward<T>(p, dx, x, dy);                                                            \
	}

POOL(f32, float)
POOL(f64, double)
POOL(f16, hf16)
POOL(bf16, hbf16)
