// index.cu: the kernels of backend.IndexKernels (see nd/cpu/index.go):
// Gather, ScatterAdd, Where, Cumsum and Sort, for every storage type.
// Results equal the CPU backend's bit for bit: ScatterAdd and Cumsum add in
// the CPU's order (no atomics: a thread per column, a thread per run of
// equal sorted indices, or a block per line with one thread adding), and
// Sort is a stable merge sort with the CPU's order (NaN above every
// number).
//
// Index operands may have any dtype (its code is idt, read by loadIndex:
// floats truncated toward zero, NaN 0, saturating; Bool 0 or 1) and are
// read through the strides of their [outer, m, inner] view (0 broadcasts).
#include "common.cuh"

// GatherDims mirrors backend.GatherParams and the index operand's strides
// (cuda/index.go's gatherDims): data [outer, n, inner], index and gathered
// operands [outer, m, inner], indices clipped to [0, n) or, with wrap,
// taken modulo n.
struct GatherDims {
	i64 outer, n, m, inner;
	i64 wrap;
	i64 s0, s1, s2;
};

// SORT_RUN is the length of the runs sort_runs_* sorts by insertion before
// the merge passes (sortRun in cuda/index.go).
#define SORT_RUN 16

// ixResolve maps index k into [0, n): clipped, or wrapped with wrap.
__device__ __forceinline__ i64 ixResolve(i64 k, i64 n, i64 wrap) {
	if (wrap) {
		k %= n;
		if (k < 0) k += n;
		return k;
	}
	if (k < 0) k = 0;
	if (k > n - 1) k = n - 1;
	return k;
}

// ixIndex reads the index of position (o, j, i) of g's index view.
__device__ __forceinline__ i64 ixIndex(const void* idx, i64 idt, const GatherDims& g, i64 o, i64 j, i64 i) {
	return ixResolve(loadIndex(idx, idt, o * g.s0 + j * g.s1 + i * g.s2), g.n, g.wrap);
}

// ixAdd adds in the element type as Go's += does: floats rounded to T,
// integers with wrap-around.
template <typename T> __device__ __forceinline__ T ixAdd(T a, T b) { return a + b; }
template <> __device__ __forceinline__ int ixAdd<int>(int a, int b) {
	return (int)(unsigned int)((unsigned int)a + (unsigned int)b);
}
template <> __device__ __forceinline__ i64 ixAdd<i64>(i64 a, i64 b) { return wrapAdd(a, b); }
template <> __device__ __forceinline__ u8 ixAdd<u8>(u8 a, u8 b) { return (u8)(a + b); }

// ixOffsets maps the row-major index t of d's iteration space to the
// element offsets of its three operands.
__device__ __forceinline__ void ixOffsets(const Dims& d, i64 t, i64* off) {
	off[0] = 0;
	off[1] = 0;
	off[2] = 0;
	for (int j = (int)d.n - 1; j >= 0; j--) {
		i64 s = d.shape[j];
		i64 k = t % s;
		t /= s;
		off[0] += k * d.st[0][j];
		off[1] += k * d.st[1][j];
		off[2] += k * d.st[2][j];
	}
}

// ixBefore says whether a sorts strictly before b: ascending with NaN
// above every number (NaNs equal to each other), or the reverse with desc.
// Equal values are never before each other, which keeps the sort stable.
template <typename T> __device__ __forceinline__ bool ixBefore(T a, T b, i64 desc) {
	if (desc) {
		T t = a;
		a = b;
		b = t;
	}
	if (a != a) return false;
	if (b != b) return true;
	return a < b;
}

// ixLine returns the offset of element 0 of line l (l = o*inner + i) of an
// [outer, n, inner] buffer; element j of the line is inner elements
// further each. A scratch buffer of lines laid end to end has inner 1.
__device__ __forceinline__ i64 ixLine(i64 l, i64 n, i64 inner) { return (l / inner) * n * inner + l % inner; }

// index_resolve writes k[(o*m + j)*inner + i] = the index at (o, j, i)
// resolved into [0, g.n), for o < outer and i < inner (1 where the index
// view broadcasts over an axis): the keys ScatterAdd's sorted path sorts.
extern "C" __global__ void index_resolve(i64* k, const void* idx, i64 idt, GatherDims g, i64 outer, i64 inner) {
	GRID_LOOP(t, outer * g.m * inner) {
		i64 i = t % inner, r = t / inner, j = r % g.m, o = r / g.m;
		k[t] = ixIndex(idx, idt, g, o, j, i);
	}
}

// INDEX_KERNELS defines the kernels of the storage type T.
#define INDEX_KERNELS(SUF, T)                                                                             \
	/* d[o,j,i] = x[o, idx(o,j,i), i]; d contiguous. */                                                 \
	extern "C" __global__ void gather_##SUF(T* d, const T* x, const void* idx, i64 idt, GatherDims g) { \
		GRID_LOOP(t, g.outer * g.m * g.inner) {                                                     \
			i64 i = t % g.inner, r = t / g.inner, j = r % g.m, o = r / g.m;                     \
			d[t] = x[(o * g.n + ixIndex(idx, idt, g, o, j, i)) * g.inner + i];                  \
		}                                                                                           \
	}                                                                                                   \
	/* d[o, idx(o,j,i), i] += s[o,j,i], one thread per (o, i) visiting j in order: no two threads     \
	   write one element, and the sums are the CPU's. */                                               \
	extern "C" __global__ void scatter_add_##SUF(T* d, const T* s, const void* idx, i64 idt,           \
	                                             GatherDims g) {                                        \
		GRID_LOOP(t, g.outer * g.inner) {                                                           \
			i64 o = t / g.inner, i = t % g.inner;                                               \
			for (i64 j = 0; j < g.m; j++) {                                                     \
				T* p = d + (o * g.n + ixIndex(idx, idt, g, o, j, i)) * g.inner + i;         \
				*p = ixAdd<T>(*p, s[(o * g.m + j) * g.inner + i]);                          \
			}                                                                                   \
		}                                                                                           \
	}                                                                                                   \
	/* ScatterAdd from keys sorted stably along m: sk and sp ([so ? outer : 1, m, si ? inner : 1])   \
	   hold each line's resolved indices ascending and their positions j. The thread of (o, u, i)    \
	   that starts a run of equal keys adds the run's sources into d in j order, as the CPU does. */ \
	extern "C" __global__ void scatter_add_sorted_##SUF(T* d, const T* s, const i64* sk, const i64* sp, \
	                                                    i64 outer, i64 n, i64 m, i64 inner, i64 so,    \
	                                                    i64 si) {                                       \
		const i64 kin = si ? inner : 1;                                                             \
		GRID_LOOP(t, outer * m * inner) {                                                           \
			const i64 i = t % inner, r = t / inner, u = r % m, o = r / m;                       \
			const i64 b = ixLine((so ? o : 0) * kin + (si ? i : 0), m, kin);                    \
			const i64 key = sk[b + u * kin];                                                    \
			if (u > 0 && sk[b + (u - 1) * kin] == key) continue;                                \
			T* p = d + (o * n + key) * inner + i;                                               \
			T acc = *p;                                                                         \
			for (i64 v = u; v < m && sk[b + v * kin] == key; v++)                               \
				acc = ixAdd<T>(acc, s[(o * m + sp[b + v * kin]) * inner + i]);              \
			*p = acc;                                                                           \
		}                                                                                           \
	}                                                                                                   \
	/* d[t] = c ? a : b over dims; st[0..2] are c's, a's and b's strides, d is contiguous. */         \
	extern "C" __global__ void where_##SUF(T* d, const u8* c, const T* a, const T* b, i64 n,          \
	                                       Dims dims) {                                                 \
		i64 off[3];                                                                                 \
		GRID_LOOP(t, n) {                                                                           \
			ixOffsets(dims, t, off);                                                            \
			d[t] = c[off[0]] != 0 ? a[off[1]] : b[off[2]];                                      \
		}                                                                                           \
	}                                                                                                   \
	/* Inclusive running sums along the middle axis of [outer, n, inner], one thread per line,       \
	   in order from 0 as the CPU adds; the loads of 32 elements are issued before their additions.  \
	   d and s do not overlap (nd's Cumsum writes a new array). */                                    \
	extern "C" __global__ void cumsum_##SUF(T* __restrict__ d, const T* __restrict__ s, i64 outer,     \
	                                        i64 n, i64 inner) {                                         \
		GRID_LOOP(l, outer * inner) {                                                               \
			const i64 base = ixLine(l, n, inner);                                               \
			T acc = (T)0;                                                                       \
			i64 j = 0;                                                                          \
			for (; j + 32 <= n; j += 32) {                                                      \
				T v[32];                                                                    \
				for (int u = 0; u < 32; u++) v[u] = s[base + (j + u) * inner];              \
				for (int u = 0; u < 32; u++) {                                              \
					acc = ixAdd<T>(acc, v[u]);                                          \
					d[base + (j + u) * inner] = acc;                                    \
				}                                                                           \
			}                                                                                   \
			for (; j < n; j++) {                                                                \
				acc = ixAdd<T>(acc, s[base + j * inner]);                                   \
				d[base + j * inner] = acc;                                                  \
			}                                                                                   \
		}                                                                                           \
	}                                                                                                   \
	/* Cumsum along lines whose elements are not adjacent to the next line's (inner < 32: a       \
	   thread per line would read a cache line per element): a block per line stages tiles of      \
	   8·blockDim.x elements in shared memory, read and written coalesced, and thread 0 adds each   \
	   tile in order. */                                                                             \
	extern "C" __global__ void cumsum_block_##SUF(T* d, const T* s, i64 outer, i64 n, i64 inner) {    \
		extern __shared__ double shm[];                                                             \
		T* tile = (T*)shm;                                                                          \
		const i64 tlen = (i64)blockDim.x * 8;                                                       \
		for (i64 l = blockIdx.x; l < outer * inner; l += gridDim.x) {                               \
			const i64 base = ixLine(l, n, inner);                                               \
			T acc = (T)0;                                                                       \
			for (i64 t0 = 0; t0 < n; t0 += tlen) {                                              \
				const i64 len = n - t0 < tlen ? n - t0 : tlen;                              \
				for (i64 e = threadIdx.x; e < len; e += blockDim.x)                         \
					tile[e] = s[base + (t0 + e) * inner];                               \
				__syncthreads();                                                            \
				if (threadIdx.x == 0) {                                                     \
					i64 e = 0;                                                          \
					for (; e + 16 <= len; e += 16) { /* loads ahead of the chain */    \
						T v[16];                                                    \
						for (int u = 0; u < 16; u++) v[u] = tile[e + u];            \
						for (int u = 0; u < 16; u++) {                              \
							acc = ixAdd<T>(acc, v[u]);                          \
							tile[e + u] = acc;                                  \
						}                                                           \
					}                                                                   \
					for (; e < len; e++) {                                              \
						acc = ixAdd<T>(acc, tile[e]);                               \
						tile[e] = acc;                                              \
					}                                                                   \
				}                                                                           \
				__syncthreads();                                                            \
				for (i64 e = threadIdx.x; e < len; e += blockDim.x)                         \
					d[base + (t0 + e) * inner] = tile[e];                               \
				__syncthreads();                                                            \
			}                                                                                   \
		}                                                                                           \
	}                                                                                                   \
	/* Sorts each run of SORT_RUN elements of each line of src ([lines/inner, n, inner]) by           \
	   insertion (stable) into ov and oi (layout oinn), oi getting the positions in the line. */       \
	extern "C" __global__ void sort_runs_##SUF(T* ov, i64* oi, i64 oinn, const T* src, i64 inner,     \
	                                           i64 lines, i64 n, i64 desc) {                            \
		const i64 runs = (n + SORT_RUN - 1) / SORT_RUN;                                             \
		GRID_LOOP(t, lines * runs) {                                                                \
			const i64 l = t / runs, lo = (t % runs) * SORT_RUN;                                 \
			const i64 hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;                               \
			const T* sl = src + ixLine(l, n, inner);                                            \
			T v[SORT_RUN];                                                                      \
			i64 p[SORT_RUN];                                                                    \
			for (i64 j = lo; j < hi; j++) {                                                     \
				const T x = sl[j * inner];                                                  \
				int k = (int)(j - lo);                                                      \
				for (; k > 0 && ixBefore<T>(x, v[k - 1], desc); k--) {                      \
					v[k] = v[k - 1];                                                    \
					p[k] = p[k - 1];                                                    \
				}                                                                           \
				v[k] = x;                                                                   \
				p[k] = j;                                                                   \
			}                                                                                   \
			const i64 ob = ixLine(l, n, oinn);                                                  \
			for (i64 j = lo; j < hi; j++) {                                                     \
				ov[ob + j * oinn] = v[j - lo];                                              \
				oi[ob + j * oinn] = p[j - lo];                                              \
			}                                                                                   \
		}                                                                                           \
	}                                                                                                   \
	/* One merge pass: each line of iv/ii (layout iinn) holds sorted runs of width elements;        \
	   pairs of runs are merged into ov/oi (layout oinn), one thread per element placing it by        \
	   binary search in the partner run. Stable: a left element goes after the right run's            \
	   elements strictly before it, a right element after the left run's not after it. */            \
	extern "C" __global__ void sort_merge_##SUF(T* ov, i64* oi, i64 oinn, const T* iv, const i64* ii,  \
	                                            i64 iinn, i64 lines, i64 n, i64 width, i64 desc) {      \
		GRID_LOOP(t, lines * n) {                                                                   \
			const i64 l = t / n, j = t % n;                                                     \
			const i64 ib = ixLine(l, n, iinn);                                                  \
			const i64 r = j / width, start = (r & ~(i64)1) * width;                             \
			const i64 ps = (r ^ 1) * width;                                                     \
			i64 plen = n - ps < width ? n - ps : width;                                         \
			if (plen < 0) plen = 0;                                                             \
			const T x = iv[ib + j * iinn];                                                      \
			const bool left = (r & 1) == 0;                                                     \
			i64 lo = 0, hi = plen;                                                              \
			while (lo < hi) {                                                                   \
				const i64 mid = lo + (hi - lo) / 2;                                         \
				const T y = iv[ib + (ps + mid) * iinn];                                     \
				if (left ? ixBefore<T>(y, x, desc) : !ixBefore<T>(x, y, desc))              \
					lo = mid + 1;                                                       \
				else                                                                        \
					hi = mid;                                                           \
			}                                                                                   \
			const i64 dst = start + (j - r * width) + lo;                                       \
			const i64 ob = ixLine(l, n, oinn);                                                  \
			ov[ob + dst * oinn] = x;                                                            \
			oi[ob + dst * oinn] = ii[ib + j * iinn];                                            \
		}                                                                                           \
	}

INDEX_KERNELS(f32, float)
INDEX_KERNELS(f64, double)
INDEX_KERNELS(i32, int)
INDEX_KERNELS(i64, i64)
INDEX_KERNELS(u8, u8)
