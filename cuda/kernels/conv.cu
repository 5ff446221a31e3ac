// conv.cu: the column-matrix (im2col) transforms behind the convolutions,
// which are then matrix products in cuBLAS (cuda/conv.go). The geometry is
// that of nd/cpu/conv.go: groups, stride, padding and dilation. col2im
// gathers (one thread per input element, no atomics) and adds the kernel
// taps in the CPU's order, so it is deterministic.
#include "common.cuh"

// im2col writes the column matrix of nc images of x ([nc, inC, inH, inW],
// contiguous) into col, laid out as ConvDims describes.
template <typename T> __device__ __forceinline__ void im2col(const ConvDims& c, T* col, const T* x) {
	i64 cg = c.inC / c.groups;
	i64 kk = cg * c.kh * c.kw, ohw = c.outH * c.outW;
	GRID_LOOP(t, c.nc * c.groups * kk * ohw) {
		i64 p = t % ohw;
		i64 r = (t / ohw) % kk;
		i64 g = (t / (ohw * kk)) % c.groups;
		i64 j = t / (ohw * kk * c.groups);
		i64 ch = r / (c.kh * c.kw), kh = (r / c.kw) % c.kh, kw = r % c.kw;
		i64 oh = p / c.outW, ow = p % c.outW;
		i64 ih = oh * c.sh - c.ph + kh * c.dh;
		i64 iw = ow * c.sw - c.pw + kw * c.dw;
		T v = 0;
		if (ih >= 0 && ih < c.inH && iw >= 0 && iw < c.inW)
			v = x[((j * c.inC + g * cg + ch) * c.inH + ih) * c.inW + iw];
		col[j * c.colN + g * c.colG + r * c.colR + p] = v;
	}
}

// col2im sums the column matrix col (laid out as ConvDims describes) back
// into dx ([nc, inC, inH, inW], contiguous), overwriting it.
template <typename T> __device__ __forceinline__ void col2im(const ConvDims& c, T* dx, const T* col) {
	i64 cg = c.inC / c.groups;
	i64 plane = c.inH * c.inW;
	GRID_LOOP(t, c.nc * c.inC * plane) {
		i64 iw = t % c.inW, ih = (t / c.inW) % c.inH;
		i64 ci = (t / plane) % c.inC, j = t / (plane * c.inC);
		i64 g = ci / cg, ch = ci % cg;
		const T* cb = col + j * c.colN + g * c.colG;
		T acc = 0;
		for (i64 kh = 0; kh < c.kh; kh++) {
			i64 hs = ih + c.ph - kh * c.dh;
			if (hs < 0 || hs % c.sh != 0) continue;
			i64 oh = hs / c.sh;
			if (oh >= c.outH) continue;
			for (i64 kw = 0; kw < c.kw; kw++) {
				i64 ws = iw + c.pw - kw * c.dw;
				if (ws < 0 || ws % c.sw != 0) continue;
				i64 ow = ws / c.sw;
				if (ow >= c.outW) continue;
				i64 r = (ch * c.kh + kh) * c.kw + kw;
				acc += cb[r * c.colR + oh * c.outW + ow];
			}
		}
		dx[t] = acc;
	}
}

// convDirect computes y = conv(x, w) for nc images with one thread per
// output value, its terms added in (channel, kh, kw) order and the padding
// skipped: for convolutions so small (a network at batch 1) that the
// launches of im2col and a matrix product, or cuDNN's, cost more than the
// arithmetic. Sums are in T, as the matrix product's.
template <typename T> __device__ __forceinline__ void convDirect(const ConvDims& c, T* y, const T* x, const T* w) {
	const i64 cg = c.inC / c.groups, ocg = c.outC / c.groups, ohw = c.outH * c.outW, khw = c.kh * c.kw;
	GRID_LOOP(t, c.nc * c.outC * ohw) {
		const i64 j = t / (c.outC * ohw), r = t % (c.outC * ohw);
		const i64 oc = r / ohw, p = r % ohw, oh = p / c.outW, ow = p % c.outW;
		const T* xp = x + (j * c.inC + oc / ocg * cg) * c.inH * c.inW;
		const T* wp = w + oc * cg * khw;
		T acc = 0;
		for (i64 ch = 0; ch < cg; ch++) {
			for (i64 kh = 0; kh < c.kh; kh++) {
				const i64 ih = oh * c.sh - c.ph + kh * c.dh;
				if (ih < 0 || ih >= c.inH) continue;
				for (i64 kw = 0; kw < c.kw; kw++) {
					const i64 iw = ow * c.sw - c.pw + kw * c.dw;
					if (iw < 0 || iw >= c.inW) continue;
					acc += xp[(ch * c.inH + ih) * c.inW + iw] * wp[ch * khw + kh * c.kw + kw];
				}
			}
		}
		y[t] = acc;
	}
}

#define CONV(SUF, T)                                                                              \
	extern "C" __global__ void conv_direct_##SUF(ConvDims c, T* y, const T* x, const T* w) {        \
		convDirect<T>(c, y, x, w);                                                                \
	}                                                                                                 \
	extern "C" __global__ void im2col_##SUF(ConvDims c, T* col, const T* x) { im2col<T>(c, col, x); } \
	extern "C" __global__ void col2im_##SUF(ConvDims c, T* dx, const T* col) { col2im<T>(c, dx, col); }

CONV(f32, float)
CONV(f64, double)
