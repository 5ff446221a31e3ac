// reduce.cu: Sum, Max, Min and ArgMax over any set of axes of a contiguous
// source (see backend.Kernels.Reduce). Accumulation is in double for both
// element types, as in nd/cpu/reduce.go. NaN propagates through Max and Min
// and is never chosen by ArgMax, which returns the first maximum in the
// row-major order of the reduced axes (0 when no element beats -Inf).
#include "common.cuh"

enum { R_SUM, R_MAX, R_MIN, R_ARGMAX };

// NO_INDEX marks an ArgMax accumulator that has not taken any element.
#define NO_INDEX ((i64)0x7fffffffffffffffLL)

__device__ __forceinline__ double reduceInit(int op) {
	const double inf = __longlong_as_double(0x7ff0000000000000LL);
	if (op == R_MAX || op == R_ARGMAX) return -inf;
	if (op == R_MIN) return inf;
	return 0;
}

// fold adds one element v, at reduced index r, to the accumulator.
__device__ __forceinline__ void fold(int op, double& acc, i64& idx, double v, i64 r) {
	switch (op) {
	case R_SUM: acc += v; break;
	case R_MAX: if (v > acc || v != v) acc = v; break;
	case R_MIN: if (v < acc || v != v) acc = v; break;
	case R_ARGMAX: if (v > acc) { acc = v; idx = r; } break;
	}
}

// merge combines two partial accumulators (b into a).
__device__ __forceinline__ void merge(int op, double& a, i64& ia, double b, i64 ib) {
	switch (op) {
	case R_SUM: a += b; break;
	case R_MAX: if (a == a && (b > a || b != b)) a = b; break;
	case R_MIN: if (a == a && (b < a || b != b)) a = b; break;
	case R_ARGMAX: if (b > a || (b == a && ib < ia)) { a = b; ia = ib; } break;
	}
}

// keptBase returns the source offset of output element o.
__device__ __forceinline__ i64 keptBase(const ReduceDims& d, i64 o) {
	i64 off = 0;
	for (int j = (int)d.nk - 1; j >= 0; j--) {
		off += (o % d.kshape[j]) * d.kst[j];
		o /= d.kshape[j];
	}
	return off;
}

// reducedOffset returns the source offset of outer reduced index ro.
__device__ __forceinline__ i64 reducedOffset(const ReduceDims& d, i64 ro) {
	i64 off = 0;
	for (int j = (int)d.nr - 1; j >= 0; j--) {
		off += (ro % d.rshape[j]) * d.rst[j];
		ro /= d.rshape[j];
	}
	return off;
}

template <typename T> __device__ __forceinline__ void writeOut(int op, T* d, i64 o, double acc, i64 idx) {
	if (op == R_ARGMAX) {
		d[o] = (T)(idx == NO_INDEX ? 0 : idx);
	} else {
		d[o] = (T)acc;
	}
}

// reduceThread: one thread per output element loops over all reduced ones.
template <typename T> __device__ __forceinline__ void reduceThread(int op, T* d, const T* s, const ReduceDims& rd) {
	GRID_LOOP(o, rd.nOut) {
		i64 base = keptBase(rd, o);
		double acc = reduceInit(op);
		i64 idx = NO_INDEX;
		i64 outer = rd.inN > 0 ? rd.nRed / rd.inN : 0;
		for (i64 ro = 0; ro < outer; ro++) {
			const T* p = s + base + reducedOffset(rd, ro);
			for (i64 j = 0; j < rd.inN; j++) fold(op, acc, idx, (double)p[j * rd.inSt], ro * rd.inN + j);
		}
		writeOut<T>(op, d, o, acc, idx);
	}
}

// reduceBlock: each block reduces one part of one output element: block
// b handles output b / parts and part b % parts, a rectangle of the reduced
// space (a range of outer reduced indices, or of the inner run when there
// are fewer outer indices than parts). Its threads stride over the part and
// combine their partials in shared memory. With one part the block writes
// the output; otherwise it writes its partial to pacc/pidx[b] for
// reduceFinish. blockDim.x must be a power of two; the dynamic shared
// memory holds blockDim.x doubles and blockDim.x indices.
template <typename T>
__device__ __forceinline__ void reduceBlock(int op, T* d, const T* s, const ReduceDims& rd, i64 parts, double* pacc,
		i64* pidx) {
	extern __shared__ double shm[];
	double* sacc = shm;
	i64* sidx = (i64*)(shm + blockDim.x);
	i64 outer = rd.inN > 0 ? rd.nRed / rd.inN : 0;
	bool splitOuter = outer >= parts;
	for (i64 b = blockIdx.x; b < rd.nOut * parts; b += gridDim.x) {
		i64 o = b / parts, p = b % parts;
		i64 ro0 = 0, ro1 = outer, j0 = 0, j1 = rd.inN;
		if (splitOuter) {
			ro0 = outer * p / parts;
			ro1 = outer * (p + 1) / parts;
		} else {
			j0 = rd.inN * p / parts;
			j1 = rd.inN * (p + 1) / parts;
		}
		i64 base = keptBase(rd, o);
		double acc = reduceInit(op);
		i64 idx = NO_INDEX;
		i64 span = j1 - j0;
		if (span >= (i64)blockDim.x) {
			// Consecutive threads read consecutive elements of the inner run.
			for (i64 ro = ro0; ro < ro1; ro++) {
				const T* q = s + base + reducedOffset(rd, ro);
				for (i64 j = j0 + threadIdx.x; j < j1; j += blockDim.x)
					fold(op, acc, idx, (double)q[j * rd.inSt], ro * rd.inN + j);
			}
		} else if (span > 0) {
			i64 count = (ro1 - ro0) * span;
			for (i64 t = threadIdx.x; t < count; t += blockDim.x) {
				i64 ro = ro0 + t / span, j = j0 + t % span;
				fold(op, acc, idx, (double)s[base + reducedOffset(rd, ro) + j * rd.inSt], ro * rd.inN + j);
			}
		}
		sacc[threadIdx.x] = acc;
		sidx[threadIdx.x] = idx;
		__syncthreads();
		for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
			if (threadIdx.x < w) {
				double a = sacc[threadIdx.x];
				i64 ia = sidx[threadIdx.x];
				merge(op, a, ia, sacc[threadIdx.x + w], sidx[threadIdx.x + w]);
				sacc[threadIdx.x] = a;
				sidx[threadIdx.x] = ia;
			}
			__syncthreads();
		}
		if (threadIdx.x == 0) {
			if (parts == 1) {
				writeOut<T>(op, d, o, sacc[0], sidx[0]);
			} else {
				pacc[b] = sacc[0];
				pidx[b] = sidx[0];
			}
		}
		__syncthreads();
	}
}

// reduceFinish merges the parts' partials of each output in part order.
template <typename T>
__device__ __forceinline__ void reduceFinish(int op, T* d, const double* pacc, const i64* pidx, i64 nOut, i64 parts) {
	GRID_LOOP(o, nOut) {
		double acc = pacc[o * parts];
		i64 idx = pidx[o * parts];
		for (i64 p = 1; p < parts; p++) merge(op, acc, idx, pacc[o * parts + p], pidx[o * parts + p]);
		writeOut<T>(op, d, o, acc, idx);
	}
}

#define REDUCE(SUF, T)                                                                           \
	extern "C" __global__ void reduce_thread_##SUF(i64 op, T* d, const T* s, ReduceDims rd) { \
		reduceThread<T>((int)op, d, s, rd);                                                 \
	}                                                                                            \
	extern "C" __global__ void reduce_block_##SUF(i64 op, T* d, const T* s, ReduceDims rd,    \
	                                              i64 parts, double* pacc, i64* pidx) {       \
		reduceBlock<T>((int)op, d, s, rd, parts, pacc, pidx);                               \
	}                                                                                            \
	extern "C" __global__ void reduce_finish_##SUF(i64 op, T* d, const double* pacc,           \
	                                               const i64* pidx, i64 nOut, i64 parts) {      \
		reduceFinish<T>((int)op, d, pacc, pidx, nOut, parts);                               \
	}

REDUCE(f32, float)
REDUCE(f64, double)
