// reduce.cu: Sum, Max, Min, ArgMax and ArgMin over any set of axes of a
// contiguous source (see backend.Kernels.Reduce), for every storage type.
// Floats accumulate in double, as in nd/cpu/reduce.go: NaN propagates
// through Max and Min, and is the extreme of ArgMax and ArgMin (the first
// NaN wins). Integers (and Bool, as u8) accumulate in int64, sums wrapping
// around. ArgMax and ArgMin return the first extreme in the row-major order
// of the reduced axes (0 when no float element beats the initial -Inf or
// +Inf), written into a destination of any dtype (its code is odt); the
// other reductions write the source's dtype.
#include "common.cuh"

// NO_INDEX marks an accumulator that has not taken any element.
#define NO_INDEX ((i64)0x7fffffffffffffffLL)

// FloatAcc accumulates float elements in double.
struct FloatAcc {
	typedef double A;
	static __device__ __forceinline__ double init(int op) {
		const double inf = __longlong_as_double(0x7ff0000000000000LL);
		if (op == R_MAX || op == R_ARG_MAX) return -inf;
		if (op == R_MIN || op == R_ARG_MIN) return inf;
		return 0;
	}
	// fold adds one element v, at reduced index r, to the accumulator.
	static __device__ __forceinline__ void fold(int op, double& acc, i64& idx, double v, i64 r) {
		switch (op) {
		case R_SUM: acc += v; break;
		case R_MAX: if (v > acc || v != v) acc = v; break;
		case R_MIN: if (v < acc || v != v) acc = v; break;
		case R_ARG_MAX: if (v > acc || (v != v && acc == acc)) { acc = v; idx = r; } break;
		case R_ARG_MIN: if (v < acc || (v != v && acc == acc)) { acc = v; idx = r; } break;
		}
	}
	// merge combines two partial accumulators (b into a); a partial holds
	// the first extreme of its elements, so ties go to the lower index.
	static __device__ __forceinline__ void merge(int op, double& a, i64& ia, double b, i64 ib) {
		bool an = a != a, bn = b != b, take = false;
		switch (op) {
		case R_SUM: a += b; return;
		case R_MAX: if (a == a && (b > a || b != b)) a = b; return;
		case R_MIN: if (a == a && (b < a || b != b)) a = b; return;
		case R_ARG_MAX: take = bn ? (!an || ib < ia) : (!an && (b > a || (b == a && ib < ia))); break;
		case R_ARG_MIN: take = bn ? (!an || ib < ia) : (!an && (b < a || (b == a && ib < ia))); break;
		}
		if (take) {
			a = b;
			ia = ib;
		}
	}
};

// IntAcc accumulates integer elements in int64. Every op but Sum keeps the
// index of the element it holds (NO_INDEX while it holds none).
struct IntAcc {
	typedef i64 A;
	static __device__ __forceinline__ i64 init(int) { return 0; }
	static __device__ __forceinline__ void fold(int op, i64& acc, i64& idx, i64 v, i64 r) {
		switch (op) {
		case R_SUM: acc = wrapAdd(acc, v); break;
		case R_MAX:
		case R_ARG_MAX: if (idx == NO_INDEX || v > acc) { acc = v; idx = r; } break;
		case R_MIN:
		case R_ARG_MIN: if (idx == NO_INDEX || v < acc) { acc = v; idx = r; } break;
		}
	}
	static __device__ __forceinline__ void merge(int op, i64& a, i64& ia, i64 b, i64 ib) {
		bool take = false;
		switch (op) {
		case R_SUM: a = wrapAdd(a, b); return;
		case R_MAX:
		case R_ARG_MAX: take = ib != NO_INDEX && (ia == NO_INDEX || b > a || (b == a && ib < ia)); break;
		case R_MIN:
		case R_ARG_MIN: take = ib != NO_INDEX && (ia == NO_INDEX || b < a || (b == a && ib < ia)); break;
		}
		if (take) {
			a = b;
			ia = ib;
		}
	}
};

// AccOf<T>::R is the accumulator of element type T.
template <typename T> struct AccOf { typedef IntAcc R; };
template <> struct AccOf<float> { typedef FloatAcc R; };
template <> struct AccOf<double> { typedef FloatAcc R; };
template <> struct AccOf<hf16> { typedef FloatAcc R; }; // decoded to float, summed in double
template <> struct AccOf<hbf16> { typedef FloatAcc R; };

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

// writeOut writes output o: an index into d of dtype code odt, or a value
// into d of the source's type T.
template <typename T, typename A>
__device__ __forceinline__ void writeOut(int op, void* d, i64 odt, i64 o, A acc, i64 idx) {
	if (op == R_ARG_MAX || op == R_ARG_MIN) {
		storeAs(d, odt, o, idx == NO_INDEX ? 0 : idx);
	} else {
		((T*)d)[o] = (T)acc;
	}
}

// reduceThread: one thread per output element loops over all reduced ones.
template <typename T>
__device__ __forceinline__ void reduceThread(int op, void* d, i64 odt, const T* s, const ReduceDims& rd) {
	typedef typename AccOf<T>::R R;
	typedef typename R::A A;
	GRID_LOOP(o, rd.nOut) {
		i64 base = keptBase(rd, o);
		A acc = R::init(op);
		i64 idx = NO_INDEX;
		i64 outer = rd.inN > 0 ? rd.nRed / rd.inN : 0;
		for (i64 ro = 0; ro < outer; ro++) {
			const T* p = s + base + reducedOffset(rd, ro);
			for (i64 j = 0; j < rd.inN; j++) R::fold(op, acc, idx, (A)p[j * rd.inSt], ro * rd.inN + j);
		}
		writeOut<T, A>(op, d, odt, o, acc, idx);
	}
}

// reduceBlock: each block reduces one part of one output element: block
// b handles output b / parts and part b % parts, a rectangle of the reduced
// space (a range of outer reduced indices, or of the inner run when there
// are fewer outer indices than parts). Its threads stride over the part and
// combine their partials in shared memory. With one part the block writes
// the output; otherwise it writes its partial to pacc/pidx[b] for
// reduceFinish. blockDim.x must be a power of two; the dynamic shared
// memory holds blockDim.x accumulators and blockDim.x indices (8 bytes
// each).
template <typename T>
__device__ __forceinline__ void reduceBlock(int op, void* d, i64 odt, const T* s, const ReduceDims& rd, i64 parts,
		typename AccOf<T>::R::A* pacc, i64* pidx) {
	typedef typename AccOf<T>::R R;
	typedef typename R::A A;
	extern __shared__ double shm[];
	A* sacc = (A*)shm;
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
		A acc = R::init(op);
		i64 idx = NO_INDEX;
		i64 span = j1 - j0;
		if (span >= (i64)blockDim.x) {
			// Consecutive threads read consecutive elements of the inner run.
			for (i64 ro = ro0; ro < ro1; ro++) {
				const T* q = s + base + reducedOffset(rd, ro);
				for (i64 j = j0 + threadIdx.x; j < j1; j += blockDim.x)
					R::fold(op, acc, idx, (A)q[j * rd.inSt], ro * rd.inN + j);
			}
		} else if (span > 0) {
			i64 count = (ro1 - ro0) * span;
			for (i64 t = threadIdx.x; t < count; t += blockDim.x) {
				i64 ro = ro0 + t / span, j = j0 + t % span;
				R::fold(op, acc, idx, (A)s[base + reducedOffset(rd, ro) + j * rd.inSt], ro * rd.inN + j);
			}
		}
		sacc[threadIdx.x] = acc;
		sidx[threadIdx.x] = idx;
		__syncthreads();
		for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
			if (threadIdx.x < w) {
				A a = sacc[threadIdx.x];
				i64 ia = sidx[threadIdx.x];
				R::merge(op, a, ia, sacc[threadIdx.x + w], sidx[threadIdx.x + w]);
				sacc[threadIdx.x] = a;
				sidx[threadIdx.x] = ia;
			}
			__syncthreads();
		}
		if (threadIdx.x == 0) {
			if (parts == 1) {
				writeOut<T, A>(op, d, odt, o, sacc[0], sidx[0]);
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
__device__ __forceinline__ void reduceFinish(int op, void* d, i64 odt, const typename AccOf<T>::R::A* pacc,
		const i64* pidx, i64 nOut, i64 parts) {
	typedef typename AccOf<T>::R R;
	typedef typename R::A A;
	GRID_LOOP(o, nOut) {
		A acc = pacc[o * parts];
		i64 idx = pidx[o * parts];
		for (i64 p = 1; p < parts; p++) R::merge(op, acc, idx, pacc[o * parts + p], pidx[o * parts + p]);
		writeOut<T, A>(op, d, odt, o, acc, idx);
	}
}

// REDUCE defines the reduction kernels of element type T, whose
// accumulator type is A (the partials pacc of reduce_block and
// reduce_finish).
#define REDUCE(SUF, T, A)                                                                             \
	extern "C" __global__ void reduce_thread_##SUF(i64 op, void* d, i64 odt, const T* s, ReduceDims rd) { \
		reduceThread<T>((int)op, d, odt, s, rd);                                                 \
	}                                                                                                 \
	extern "C" __global__ void reduce_block_##SUF(i64 op, void* d, i64 odt, const T* s, ReduceDims rd,  \
	                                              i64 parts, A* pacc, i64* pidx) {                     \
		reduceBlock<T>((int)op, d, odt, s, rd, parts, pacc, pidx);                               \
	}                                                                                                 \
	extern "C" __global__ void reduce_finish_##SUF(i64 op, void* d, i64 odt, const A* pacc,          \
	                                               const i64* pidx, i64 nOut, i64 parts) {           \
		reduceFinish<T>((int)op, d, odt, pacc, pidx, nOut, parts);                               \
	}

REDUCE(f32, float, double)
REDUCE(f64, double, double)
REDUCE(i32, int, i64)
REDUCE(i64, i64, i64)
REDUCE(u8, u8, i64)
// Half storage: a result is rounded to float and then to half (hf16's
// store), the bits of the float32 instance followed by nd's rounding.
REDUCE(f16, hf16, double)
REDUCE(bf16, hbf16, double)
