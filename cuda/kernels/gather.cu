// gather.cu: Pick, PickBackward and OneHot (see nd/cpu/gather.go). The
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
		bool fidx = idt == DT_F32 || idt == DT_F64;                                               \
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
