// gather.cu: Pick, PickBackward and OneHot (see nd/cpu/gather.go).
// Indices are stored as floats; Pick clips them to [0, n).
#include "common.cuh"

__device__ __forceinline__ i64 clampIndex(double v, i64 n) {
	i64 i = (i64)v;
	if (i < 0) i = 0;
	if (i > n - 1) i = n - 1;
	return i;
}

#define GATHER(SUF, T)                                                                                   \
	/* d[o*inner+i] = x[(o*n + idx[o*inner+i])*inner + i] */                                            \
	extern "C" __global__ void pick_##SUF(T* d, const T* x, const T* idx, i64 outer, i64 n, i64 inner) { \
		GRID_LOOP(t, outer * inner) {                                                                \
			i64 o = t / inner, i = t % inner;                                                    \
			i64 k = clampIndex((double)idx[t], n);                                               \
			d[t] = x[(o * n + k) * inner + i];                                                   \
		}                                                                                            \
	}                                                                                                    \
	/* dx[(o*n + idx)*inner + i] += dy[o*inner+i]; each thread owns distinct dx elements. */             \
	extern "C" __global__ void pick_backward_##SUF(T* dx, const T* dy, const T* idx, i64 outer, i64 n,  \
	                                               i64 inner) {                                         \
		GRID_LOOP(t, outer * inner) {                                                                \
			i64 o = t / inner, i = t % inner;                                                    \
			i64 k = clampIndex((double)idx[t], n);                                               \
			dx[(o * n + k) * inner + i] += dy[t];                                                \
		}                                                                                            \
	}                                                                                                    \
	/* d[i*depth + j] = on if idx[i] is exactly the integer j, else off. */                              \
	extern "C" __global__ void one_hot_##SUF(T* d, const T* idx, i64 n, i64 depth, double on,          \
	                                         double off) {                                              \
		GRID_LOOP(t, n * depth) {                                                                    \
			i64 i = t / depth, j = t % depth;                                                    \
			double v = (double)idx[i];                                                           \
			i64 k = (i64)v;                                                                      \
			bool hit = k >= 0 && k < depth && (double)k == v && k == j;                          \
			d[t] = hit ? (T)on : (T)off;                                                         \
		}                                                                                            \
	}

GATHER(f32, float)
GATHER(f64, double)
