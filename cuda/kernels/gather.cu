// gather.cu: Pick, PickBackward, OneHot (see nd/cpu/gather.go) and the
// fused softmax cross-entropy (nd/cpu/softmaxce.go). The
// index array may have any dtype (its code is idt): floats are truncated
// toward zero (NaN is 0, out-of-range values saturate), Bool is 0 or 1.
// Pick clips indices to [0, n); OneHot selects column j only for an index
// equal to j (a float index must be a whole number).
#include "common.cuh"

__device__ __forceinline__ i64 clampIndex(i64 i, i64 n) {
	if (i < 0) i = 0;
	if (i > n - 1) i = n - 1;
	return i;
}

// PICK defines Pick and PickBackward, whose values have the float type T.
#define PICK(SUF, T)                                                                                  \
	/* d[o*inner+i] = x[(o*n + idx[o*inner+i])*inner + i] */                                         \
	extern "C" __global__ void pick_##SUF(T* d, const T* x, const void* idx, i64 idt, i64 outer, i64 n, \
	                                      i64 inner) {                                                \
		GRID_LOOP(t, outer * inner) {                                                             \
			i64 o = t / inner, i = t % inner;                                                 \
			i64 k = clampIndex(loadIndex(idx, idt, t), n);                                    \
			d[t] = x[(o * n + k) * inner + i];                                                \
		}                                                                                         \
	}                                                                                                 \
	/* dx[(o*n + idx)*inner + i] += dy[o*inner+i]; each thread owns distinct dx elements. */          \
	extern "C" __global__ void pick_backward_##SUF(T* dx, const T* dy, const void* idx, i64 idt,      \
	                                               i64 outer, i64 n, i64 inner) {                    \
		GRID_LOOP(t, outer * inner) {                                                             \
			i64 o = t / inner, i = t % inner;                                                 \
			i64 k = clampIndex(loadIndex(idx, idt, t), n);                                    \
			dx[(o * n + k) * inner + i] += dy[t];                                             \
		}                                                                                         \
	}

// ONE_HOT defines OneHot into a T destination; on and off are converted
// as Fill converts (the host passes 0 or 1 for a Bool destination).
#define ONE_HOT(SUF, T)                                                                               \
	/* d[i*depth + j] = on if idx[i] is exactly the integer j, else off. */                           \
	extern "C" __global__ void one_hot_##SUF(T* d, const void* idx, i64 idt, i64 n, i64 depth,       \
	                                         double on, double off) {                                 \
		T ton = fromDouble<T>(on), toff = fromDouble<T>(off);                                     \
		bool fidx = idt == DT_FLOAT32 || idt == DT_FLOAT64;                                               \
		GRID_LOOP(t, n * depth) {                                                                 \
			i64 i = t / depth, j = t % depth;                                                 \
			bool hit = fidx ? loadFloat(idx, idt, i) == (double)j : loadIndex(idx, idt, i) == j; \
			d[t] = hit ? ton : toff;                                                          \
		}                                                                                         \
	}

PICK(f32, float)
PICK(f64, double)
ONE_HOT(f32, float)
ONE_HOT(f64, double)
ONE_HOT(i32, int)
ONE_HOT(i64, i64)
ONE_HOT(u8, u8)

// SOFTMAX_CE defines the fused softmax cross-entropy
// (backend.SoftmaxCEKernels) over x viewed as [outer, C, inner], one
// thread per position: lse = max + log Σ exp(x − max) in double, loss =
// lse − x[label], and backward dx = g·(exp(x − lse) − [class = label]),
// the label clipped to [0, C) as Pick clips it. NaN logits give NaN, as
// nd/cpu's Go max does.
#define SOFTMAX_CE(SUF, T)                                                                            \
	extern "C" __global__ void softmax_ce_##SUF(T* loss, double* lse, const T* x, const void* idx,     \
			i64 idt, i64 outer, i64 C, i64 inner) {                                            \
		GRID_LOOP(t, outer * inner) {                                                             \
			const T* xr = x + (t / inner) * C * inner + t % inner;                            \
			double m = __longlong_as_double(0xfff0000000000000LL); /* -Inf */                  \
			for (i64 k = 0; k < C; k++) m = gmax(m, (double)xr[k * inner]);                   \
			double s = 0;                                                                     \
			for (i64 k = 0; k < C; k++) s += exp((double)xr[k * inner] - m);                  \
			const double v = m + log(s);                                                      \
			lse[t] = v;                                                                       \
			loss[t] = (T)(v - (double)xr[clampIndex(loadIndex(idx, idt, t), C) * inner]);     \
		}                                                                                         \
	}                                                                                                 \
	extern "C" __global__ void softmax_ce_backward_##SUF(T* dx, const T* g, const T* x,              \
			const double* lse, const void* idx, i64 idt, i64 outer, i64 C, i64 inner) {        \
		GRID_LOOP(t, outer * inner) {                                                             \
			const i64 base = (t / inner) * C * inner + t % inner;                             \
			const i64 label = clampIndex(loadIndex(idx, idt, t), C);                          \
			const double gv = (double)g[t], v = lse[t];                                       \
			for (i64 k = 0; k < C; k++) {                                                     \
				const double d = exp((double)x[base + k * inner] - v) - (k == label ? 1.0 : 0.0); \
				dx[base + k * inner] = (T)(gv * d);                                       \
			}                                                                                 \
		}                                                                                         \
	}
SOFTMAX_CE(f32, float)
SOFTMAX_CE(f64, double)
