//go:build cudaemu

// emu_kernels.cc compiles the CUDA C kernels (kernels/*.cu) as ordinary
// C++ for the host, for the -tags cudaemu build: a launch runs every
// thread of the grid one after the other on the calling thread. Kernels
// that cooperate through shared memory (reduce_block) run with one thread
// per block, which their loops allow. This checks the kernels' indexing
// and arithmetic and the host code's launches without a GPU; it says
// nothing about speed or the PTX itself. Kernels that cooperate through
// shared memory and __syncthreads (reduce_block) run each block with one
// POSIX thread per CUDA thread (at most 8) and a barrier, one block at a
// time.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <pthread.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__

struct emuDim3 {
	unsigned int x, y, z;
};
static thread_local emuDim3 blockIdx, blockDim, gridDim, threadIdx;
static double shm[1024]; // shared memory of the one block running
static pthread_barrier_t emuBarrier;
static std::mutex emuBlockMu; // one cooperative block at a time, process-wide
static inline void __syncthreads() { pthread_barrier_wait(&emuBarrier); }
static inline double __longlong_as_double(long long v) {
	double d;
	memcpy(&d, &v, sizeof d);
	return d;
}
using std::exp;
using std::fabs;
using std::log;
using std::log1p;
using std::pow;
using std::sqrt;
using std::tanh;

#include "kernels/conv.cu"
#include "kernels/elementwise.cu"
#include "kernels/gather.cu"
#include "kernels/pool.cu"
#include "kernels/reduce.cu"

#define P(i, T) (*(T*)params[i])

// emu_call runs kernel name once for the current (block, thread); params
// point at the launch's parameter values. It returns 0, or -1 for an
// unknown kernel.
static int emu_call(const char* name, void** params) {
#define K(n) if (!strcmp(name, #n))
#define TYPED(SUF, T)                                                                                        \
	K(fill_##SUF) { fill_##SUF(P(0, T*), P(1, i64), P(2, double)); return 0; }                             \
	K(unary_##SUF) { unary_##SUF(P(0, i64), P(1, T*), P(2, T*), P(3, i64), P(4, double), P(5, double)); return 0; } \
	K(binary_flat_##SUF) { binary_flat_##SUF(P(0, i64), P(1, T*), P(2, T*), P(3, T*), P(4, i64)); return 0; } \
	K(binary_strided_##SUF) {                                                                            \
		binary_strided_##SUF(P(0, i64), P(1, T*), P(2, T*), P(3, T*), P(4, i64), P(5, Dims));       \
		return 0;                                                                                    \
	}                                                                                                    \
	K(copy_strided_##SUF) { copy_strided_##SUF(P(0, T*), P(1, T*), P(2, i64), P(3, Dims)); return 0; }   \
	K(scale_rows_##SUF) {                                                                                \
		scale_rows_##SUF(P(0, T*), P(1, i64), P(2, i64), P(3, i64), P(4, i64), P(5, i64), P(6, double)); \
		return 0;                                                                                    \
	}                                                                                                    \
	K(reduce_thread_##SUF) { reduce_thread_##SUF(P(0, i64), P(1, T*), P(2, T*), P(3, ReduceDims)); return 0; } \
	K(reduce_block_##SUF) {                                                                              \
		reduce_block_##SUF(P(0, i64), P(1, T*), P(2, T*), P(3, ReduceDims), P(4, i64), P(5, double*), P(6, i64*)); \
		return 0;                                                                                    \
	}                                                                                                    \
	K(reduce_finish_##SUF) {                                                                             \
		reduce_finish_##SUF(P(0, i64), P(1, T*), P(2, double*), P(3, i64*), P(4, i64), P(5, i64));   \
		return 0;                                                                                    \
	}                                                                                                    \
	K(pick_##SUF) { pick_##SUF(P(0, T*), P(1, T*), P(2, T*), P(3, i64), P(4, i64), P(5, i64)); return 0; } \
	K(pick_backward_##SUF) {                                                                             \
		pick_backward_##SUF(P(0, T*), P(1, T*), P(2, T*), P(3, i64), P(4, i64), P(5, i64));         \
		return 0;                                                                                    \
	}                                                                                                    \
	K(one_hot_##SUF) { one_hot_##SUF(P(0, T*), P(1, T*), P(2, i64), P(3, i64), P(4, double), P(5, double)); return 0; } \
	K(pool_forward_##SUF) { pool_forward_##SUF(P(0, PoolDims), P(1, T*), P(2, T*)); return 0; }          \
	K(pool_backward_##SUF) { pool_backward_##SUF(P(0, PoolDims), P(1, T*), P(2, T*), P(3, T*)); return 0; } \
	K(im2col_##SUF) { im2col_##SUF(P(0, ConvDims), P(1, T*), P(2, T*)); return 0; }                      \
	K(col2im_##SUF) { col2im_##SUF(P(0, ConvDims), P(1, T*), P(2, T*)); return 0; }
	TYPED(f32, float)
	TYPED(f64, double)
	K(cast_f32_f64) { cast_f32_f64(P(0, double*), P(1, float*), P(2, i64)); return 0; }
	K(cast_f64_f32) { cast_f64_f32(P(0, float*), P(1, double*), P(2, i64)); return 0; }
#undef TYPED
#undef K
	return -1;
}

struct emuThread {
	const char* name;
	void** params;
	unsigned int grid, block, b, t;
	int result;
};

static void* emuThreadMain(void* arg) {
	emuThread* e = (emuThread*)arg;
	gridDim = {e->grid, 1, 1};
	blockDim = {e->block, 1, 1};
	blockIdx = {e->b, 0, 0};
	threadIdx = {e->t, 0, 0};
	e->result = emu_call(e->name, e->params);
	return NULL;
}

// emu_cooperative runs each block of a kernel that uses __syncthreads with
// one thread per CUDA thread. Blocks are cut to at most 8 threads (the
// kernels accept any power of two) to keep thread creation cheap.
static int emu_cooperative(const char* name, unsigned int grid, unsigned int block, void** params) {
	if (block > 8) block = 8;
	if (block > 256 || block * 2 > sizeof shm / sizeof shm[0]) return -3;
	std::lock_guard<std::mutex> lock(emuBlockMu);
	pthread_t th[256];
	emuThread ts[256];
	for (unsigned int b = 0; b < grid; b++) {
		pthread_barrier_init(&emuBarrier, NULL, block);
		for (unsigned int t = 0; t < block; t++) {
			ts[t] = emuThread{name, params, grid, block, b, t, 0};
			if (pthread_create(&th[t], NULL, emuThreadMain, &ts[t]) != 0) return -4;
		}
		int r = 0;
		for (unsigned int t = 0; t < block; t++) {
			pthread_join(th[t], NULL);
			if (ts[t].result != 0) r = ts[t].result;
		}
		pthread_barrier_destroy(&emuBarrier);
		if (r != 0) return r;
	}
	return 0;
}

extern "C" int goluon_emu_launch(const char* name, unsigned int grid, unsigned int block, const char* blob,
		const int* offs, int n) {
	void* params[64];
	if (n > 64) return -2;
	for (int i = 0; i < n; i++) params[i] = (void*)(blob + offs[i]);
	if (!strcmp(name, "reduce_block_f32") || !strcmp(name, "reduce_block_f64"))
		return emu_cooperative(name, grid, block, params);
	gridDim = {grid, 1, 1};
	blockDim = {block, 1, 1};
	for (unsigned int b = 0; b < grid; b++) {
		for (unsigned int t = 0; t < block; t++) {
			blockIdx = {b, 0, 0};
			threadIdx = {t, 0, 0};
			int r = emu_call(name, params);
			if (r != 0) return r;
		}
	}
	return 0;
}

// goluon_emu_gemm is cuBLAS's column-major strided-batched gemm, naively:
// C = alpha*op(A)*op(B) + beta*C (C not read when beta is 0).
template <typename T>
static void gemmT(int ta, int tb, int m, int n, int k, double alpha, const T* A, int lda, long long sa,
		const T* B, int ldb, long long sb, double beta, T* C, int ldc, long long sc, int batch) {
	for (int bi = 0; bi < batch; bi++) {
		const T* a = A + bi * sa;
		const T* b = B + bi * sb;
		T* c = C + bi * sc;
		for (int j = 0; j < n; j++) {
			for (int i = 0; i < m; i++) {
				double s = 0;
				for (int l = 0; l < k; l++) {
					double av = ta ? a[l + (long long)i * lda] : a[i + (long long)l * lda];
					double bv = tb ? b[j + (long long)l * ldb] : b[l + (long long)j * ldb];
					s += av * bv;
				}
				T* out = &c[i + (long long)j * ldc];
				*out = (T)(alpha * s + (beta == 0 ? 0.0 : beta * (double)*out));
			}
		}
	}
}

extern "C" void goluon_emu_gemm(int f64, int ta, int tb, int m, int n, int k, double alpha, uintptr_t a, int lda,
		long long sa, uintptr_t b, int ldb, long long sb, double beta, uintptr_t c, int ldc, long long sc,
		int batch) {
	if (f64)
		gemmT<double>(ta, tb, m, n, k, alpha, (const double*)a, lda, sa, (const double*)b, ldb, sb, beta,
			(double*)c, ldc, sc, batch);
	else
		gemmT<float>(ta, tb, m, n, k, alpha, (const float*)a, lda, sa, (const float*)b, ldb, sb, beta,
			(float*)c, ldc, sc, batch);
}
