//go:build cudaemu

// emu_kernels.cc compiles the CUDA C kernels (kernels/*.cu) as ordinary
// C++ for the host, for the -tags cudaemu build: a launch runs every
// thread of the grid one after the other on the calling thread. This
// checks the kernels' indexing and arithmetic and the host code's launches
// without a GPU; it says nothing about speed or the PTX itself. Kernels
// that cooperate through shared memory and __syncthreads (reduce_block_*,
// bn_sums_*, bias_relu_sums_*, cumsum_block_*) run each block with one POSIX thread per CUDA thread (at
// most 8) and a barrier, one block at a time.

#include <cmath>
#include <cstdint>
#include <cstdlib>
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
// erfinv is CUDA's inverse error function, which C++ lacks: Winitzki's
// closed-form estimate refined by Newton steps on erf(x) − y.
static inline double erfinv(double y) {
	if (!(y > -1 && y < 1)) {
		if (y == 1) return HUGE_VAL;
		if (y == -1) return -HUGE_VAL;
		return NAN;
	}
	if (y == 0) return y;
	const double a = 0.147, pi = 3.14159265358979323846;
	double l = std::log1p(-y * y), t = 2 / (pi * a) + l / 2;
	double x = std::copysign(std::sqrt(std::sqrt(t * t - l / a) - t), y);
	for (int i = 0; i < 4; i++) {
		double d = (std::erf(x) - y) / (2 / std::sqrt(pi) * std::exp(-x * x));
		x -= d;
		if (std::fabs(d) <= 1e-17 * std::fabs(x)) break;
	}
	return x;
}
using std::exp;
using std::fma;
using std::fmaf;
using std::fabs;
using std::log;
using std::log1p;
using std::pow;
using std::sqrt;
using std::tanh;
using std::trunc;

#include "kernels/batchnorm.cu"
#include "kernels/cast.cu"
#include "kernels/collective.cu"
#include "kernels/conv.cu"
#include "kernels/elementwise.cu"
#include "kernels/gather.cu"
#include "kernels/index.cu"
#include "kernels/pool.cu"
#include "kernels/reduce.cu"

#define P(i, T) (*(T*)params[i])

// emuKernel is one kernel the emulator can run: fn calls it once for the
// current (block, thread) with the launch's parameter values.
struct emuKernel {
	const char* name;
	void (*fn)(void** params);
};

#define K(n, ...) {#n, [](void** params) { n(__VA_ARGS__); }}
// Kernels of every storage type T (suffix SUF).
#define ALL_TYPES(SUF, T)                                                                                   \
	K(fill_##SUF, P(0, T*), P(1, i64), P(2, double)),                                                   \
	K(unary_##SUF, P(0, i64), P(1, T*), P(2, T*), P(3, i64), P(4, double), P(5, double)),               \
	K(binary_flat_##SUF, P(0, i64), P(1, T*), P(2, T*), P(3, T*), P(4, i64)),                           \
	K(binary_strided_##SUF, P(0, i64), P(1, T*), P(2, T*), P(3, T*), P(4, i64), P(5, Dims)),           \
	K(copy_strided_##SUF, P(0, T*), P(1, T*), P(2, i64), P(3, Dims)),                                   \
	K(truth_##SUF, P(0, u8*), P(1, T*), P(2, i64)),                                                     \
	K(one_hot_##SUF, P(0, T*), P(1, void*), P(2, i64), P(3, i64), P(4, i64), P(5, double), P(6, double)), \
	K(reduce_thread_##SUF, P(0, i64), P(1, void*), P(2, i64), P(3, T*), P(4, ReduceDims)),              \
	K(reduce_block_##SUF, P(0, i64), P(1, void*), P(2, i64), P(3, T*), P(4, ReduceDims), P(5, i64),     \
		P(6, AccOf<T>::R::A*), P(7, i64*)),                                                         \
	K(reduce_finish_##SUF, P(0, i64), P(1, void*), P(2, i64), P(3, AccOf<T>::R::A*), P(4, i64*),        \
		P(5, i64), P(6, i64))
// Binary kernels with a Bool (u8) result from T operands.
#define TO_BOOL(SUF, T)                                                                                     \
	K(binary_flat_##SUF##_b, P(0, i64), P(1, u8*), P(2, T*), P(3, T*), P(4, i64)),                      \
	K(binary_strided_##SUF##_b, P(0, i64), P(1, u8*), P(2, T*), P(3, T*), P(4, i64), P(5, Dims))
// Unary and Binary of a half-precision storage type (elementwise.cu).
#define HALF_ELEM_K(SUF)                                                                                    \
	K(unary_##SUF, P(0, i64), P(1, u16*), P(2, u16*), P(3, i64), P(4, double), P(5, double)),           \
	K(binary_flat_##SUF, P(0, i64), P(1, u16*), P(2, u16*), P(3, u16*), P(4, i64)),                     \
	K(binary_strided_##SUF, P(0, i64), P(1, u16*), P(2, u16*), P(3, u16*), P(4, i64), P(5, Dims)),     \
	TO_BOOL(SUF, u16)
// The reductions of a half-precision storage type (reduce.cu).
#define HALF_REDUCE_K(SUF, T)                                                                               \
	K(reduce_thread_##SUF, P(0, i64), P(1, void*), P(2, i64), P(3, T*), P(4, ReduceDims)),              \
	K(reduce_block_##SUF, P(0, i64), P(1, void*), P(2, i64), P(3, T*), P(4, ReduceDims), P(5, i64),     \
		P(6, double*), P(7, i64*)),                                                                 \
	K(reduce_finish_##SUF, P(0, i64), P(1, void*), P(2, i64), P(3, double*), P(4, i64*), P(5, i64),     \
		P(6, i64))
// Kernels of the float types only.
#define FLOATS(SUF, T)                                                                                      \
	K(scale_rows_##SUF, P(0, T*), P(1, i64), P(2, i64), P(3, i64), P(4, i64), P(5, i64), P(6, double)), \
	K(pick_##SUF, P(0, T*), P(1, T*), P(2, void*), P(3, i64), P(4, i64), P(5, i64), P(6, i64)),         \
	K(softmax_ce_##SUF, P(0, T*), P(1, double*), P(2, T*), P(3, void*), P(4, i64), P(5, i64), P(6, i64), \
		P(7, i64)),                                                                                 \
	K(softmax_ce_backward_##SUF, P(0, T*), P(1, T*), P(2, T*), P(3, double*), P(4, void*), P(5, i64),   \
		P(6, i64), P(7, i64), P(8, i64)),                                                           \
	K(pick_backward_##SUF, P(0, T*), P(1, T*), P(2, void*), P(3, i64), P(4, i64), P(5, i64), P(6, i64)), \
	K(pool_forward_##SUF, P(0, PoolDims), P(1, T*), P(2, T*)),                                          \
	K(pool_backward_##SUF, P(0, PoolDims), P(1, T*), P(2, T*), P(3, T*)),                               \
	K(conv_direct_##SUF, P(0, ConvDims), P(1, T*), P(2, T*), P(3, T*)),                               \
	K(im2col_##SUF, P(0, ConvDims), P(1, T*), P(2, T*)),                                                \
	K(col2im_##SUF, P(0, ConvDims), P(1, T*), P(2, T*)),                                                \
	K(opt_update_##SUF, P(0, T*), P(1, T*), P(2, T*), P(3, i64), P(4, OptProgram)),                    \
	K(dropout_mask_##SUF, P(0, T*), P(1, i64), P(2, i64), P(3, i64), P(4, double)),                   \
	K(bias_relu_##SUF, P(0, T*), P(1, T*), P(2, T*), P(3, i64), P(4, i64), P(5, i64)),                 \
	K(bn_sums_##SUF, P(0, T*), P(1, T*), P(2, i64), P(3, i64), P(4, i64), P(5, i64), P(6, double*)),   \
	K(bias_relu_sums_##SUF, P(0, T*), P(1, T*), P(2, T*), P(3, i64), P(4, i64), P(5, i64), P(6, i64),  \
		P(7, double*)),                                                                             \
	K(channel_sum_finish_##SUF, P(0, double*), P(1, i64), P(2, i64), P(3, T*)),                       \
	K(bn_stats_finish_##SUF, P(0, double*), P(1, i64), P(2, i64), P(3, double), P(4, T*), P(5, T*)),   \
	K(bn_apply_##SUF, P(0, T*), P(1, T*), P(2, i64), P(3, i64), P(4, i64), P(5, T*), P(6, T*), P(7, T*), \
		P(8, T*)),                                                                                  \
	K(bn_train_stats_##SUF, P(0, i64), P(1, T*), P(2, T*), P(3, T*), P(4, T*), P(5, T*), P(6, double),   \
		P(7, double), P(8, double), P(9, double)),                                                  \
	K(bn_eval_stats_##SUF, P(0, i64), P(1, T*), P(2, T*), P(3, T*), P(4, T*), P(5, double)),          \
	K(bn_apply_relu_##SUF, P(0, T*), P(1, T*), P(2, i64), P(3, i64), P(4, i64), P(5, T*), P(6, T*), P(7, T*), \
		P(8, T*)),                                                                                  \
	K(bn_backward_finish_##SUF, P(0, double*), P(1, i64), P(2, i64), P(3, double), P(4, T*), P(5, T*), \
		P(6, T*), P(7, i64), P(8, T*), P(9, T*), P(10, T*)),                                        \
	K(bn_dx_##SUF, P(0, T*), P(1, T*), P(2, T*), P(3, i64), P(4, i64), P(5, i64), P(6, T*), P(7, i64))
// batchnorm.cu's kernels on half storage S beside float per-channel arrays.
#define HALF_BN_K(SUF, S)                                                                                   \
	K(bn_sums_##SUF, P(0, S*), P(1, S*), P(2, i64), P(3, i64), P(4, i64), P(5, i64), P(6, double*)),   \
	K(bn_apply_##SUF, P(0, S*), P(1, S*), P(2, i64), P(3, i64), P(4, i64), P(5, float*), P(6, float*),  \
		P(7, float*), P(8, float*)),                                                                \
	K(bn_apply_relu_##SUF, P(0, S*), P(1, S*), P(2, i64), P(3, i64), P(4, i64), P(5, float*),           \
		P(6, float*), P(7, float*), P(8, float*)),                                                  \
	K(bn_dx_##SUF, P(0, S*), P(1, S*), P(2, S*), P(3, i64), P(4, i64), P(5, i64), P(6, float*), P(7, i64))
// The indexing kernels of every storage type (index.cu).
#define INDEX_K(SUF, T)                                                                                     \
	K(gather_##SUF, P(0, T*), P(1, T*), P(2, void*), P(3, i64), P(4, GatherDims)),                      \
	K(scatter_add_##SUF, P(0, T*), P(1, T*), P(2, void*), P(3, i64), P(4, GatherDims)),                 \
	K(scatter_add_sorted_##SUF, P(0, T*), P(1, T*), P(2, i64*), P(3, i64*), P(4, i64), P(5, i64),       \
		P(6, i64), P(7, i64), P(8, i64), P(9, i64)),                                                \
	K(where_##SUF, P(0, T*), P(1, u8*), P(2, T*), P(3, T*), P(4, i64), P(5, Dims)),                     \
	K(cumsum_##SUF, P(0, T*), P(1, T*), P(2, i64), P(3, i64), P(4, i64)),                               \
	K(cumsum_block_##SUF, P(0, T*), P(1, T*), P(2, i64), P(3, i64), P(4, i64)),                         \
	K(sort_runs_##SUF, P(0, T*), P(1, i64*), P(2, i64), P(3, T*), P(4, i64), P(5, i64), P(6, i64),      \
		P(7, i64)),                                                                                 \
	K(sort_merge_##SUF, P(0, T*), P(1, i64*), P(2, i64), P(3, T*), P(4, i64*), P(5, i64), P(6, i64),    \
		P(7, i64), P(8, i64), P(9, i64))
// The kernels of a half-precision storage type (HS): fill, truth and the
// casts to and from every other storage type.
#define HALF_KERNELS(HS)                                                                                        \
	K(fill_##HS, P(0, u16*), P(1, i64), P(2, double)), K(truth_##HS, P(0, u8*), P(1, u16*), P(2, i64)),          \
	CASTS(HS, u16, f32, float, f64, double, i32, int, i64, i64), K(cast_##HS##_u8, P(0, u8*), P(1, u16*), P(2, i64)), \
	K(cast_f32_##HS, P(0, u16*), P(1, float*), P(2, i64)), K(cast_f64_##HS, P(0, u16*), P(1, double*), P(2, i64)), \
	K(cast_i32_##HS, P(0, u16*), P(1, int*), P(2, i64)), K(cast_i64_##HS, P(0, u16*), P(1, i64*), P(2, i64)),      \
	K(cast_u8_##HS, P(0, u16*), P(1, u8*), P(2, i64))
// cast_S_D from S to every other storage type.
#define CASTS(SS, S, D1S, D1, D2S, D2, D3S, D3, D4S, D4)                                                    \
	K(cast_##SS##_##D1S, P(0, D1*), P(1, S*), P(2, i64)), K(cast_##SS##_##D2S, P(0, D2*), P(1, S*), P(2, i64)), \
	K(cast_##SS##_##D3S, P(0, D3*), P(1, S*), P(2, i64)), K(cast_##SS##_##D4S, P(0, D4*), P(1, S*), P(2, i64))

// The sum over virtual GPUs (collective.cu).
#define VSUM_K(SUF, T)                                                                                      \
	K(vsum_##SUF, P(0, i64), P(1, i64), P(2, T*), P(3, T*), P(4, T*), P(5, T*), P(6, T*), P(7, T*),     \
		P(8, T*), P(9, T*))

static const emuKernel emuKernels[] = {
	VSUM_K(f32, float),
	VSUM_K(f64, double),
	ALL_TYPES(f32, float),
	ALL_TYPES(f64, double),
	ALL_TYPES(i32, int),
	ALL_TYPES(i64, i64),
	ALL_TYPES(u8, u8),
	TO_BOOL(f32, float),
	TO_BOOL(f64, double),
	TO_BOOL(i32, int),
	TO_BOOL(i64, i64),
	FLOATS(f32, float),
	FLOATS(f64, double),
	CASTS(f32, float, f64, double, i32, int, i64, i64, u8, u8),
	CASTS(f64, double, f32, float, i32, int, i64, i64, u8, u8),
	CASTS(i32, int, f32, float, f64, double, i64, i64, u8, u8),
	CASTS(i64, i64, f32, float, f64, double, i32, int, u8, u8),
	CASTS(u8, u8, f32, float, f64, double, i32, int, i64, i64),
	HALF_KERNELS(f16), HALF_KERNELS(bf16),
	HALF_ELEM_K(f16), HALF_ELEM_K(bf16),
	HALF_REDUCE_K(f16, hf16), HALF_REDUCE_K(bf16, hbf16),
	K(pool_forward_f16, P(0, PoolDims), P(1, hf16*), P(2, hf16*)),
	K(pool_backward_f16, P(0, PoolDims), P(1, hf16*), P(2, hf16*), P(3, hf16*)),
	K(pool_forward_bf16, P(0, PoolDims), P(1, hbf16*), P(2, hbf16*)),
	K(pool_backward_bf16, P(0, PoolDims), P(1, hbf16*), P(2, hbf16*), P(3, hbf16*)),
	K(cast_f16_bf16, P(0, u16*), P(1, u16*), P(2, i64)), K(cast_bf16_f16, P(0, u16*), P(1, u16*), P(2, i64)),
	HALF_BN_K(f16, hf16), HALF_BN_K(bf16, hbf16),
	K(copy_strided_u16, P(0, u16*), P(1, u16*), P(2, i64), P(3, Dims)),
	INDEX_K(f32, float),
	INDEX_K(f64, double),
	INDEX_K(i32, int),
	INDEX_K(i64, i64),
	INDEX_K(u8, u8),
	K(index_resolve, P(0, i64*), P(1, void*), P(2, i64), P(3, GatherDims), P(4, i64), P(5, i64)),
};
#undef CASTS
#undef HALF_KERNELS
#undef VSUM_K
#undef FLOATS
#undef TO_BOOL
#undef ALL_TYPES
#undef INDEX_K
#undef K

// emuFind returns the emulated kernel called name, or NULL.
static const emuKernel* emuFind(const char* name) {
	for (const emuKernel& k : emuKernels)
		if (!strcmp(k.name, name)) return &k;
	return NULL;
}

extern "C" int goluon_emu_has_kernel(const char* name) { return emuFind(name) != NULL; }

struct emuThread {
	const emuKernel* k;
	void** params;
	unsigned int grid, block, t;
};

// emuThreadMain runs CUDA thread t of every block in turn, waiting at the
// barrier after each block so that the next one starts with the shared
// memory free.
static void* emuThreadMain(void* arg) {
	emuThread* e = (emuThread*)arg;
	gridDim = {e->grid, 1, 1};
	blockDim = {e->block, 1, 1};
	threadIdx = {e->t, 0, 0};
	for (unsigned int b = 0; b < e->grid; b++) {
		blockIdx = {b, 0, 0};
		e->k->fn(e->params);
		pthread_barrier_wait(&emuBarrier);
	}
	return NULL;
}

// emu_cooperative runs a kernel that uses __syncthreads with one POSIX
// thread per CUDA thread of a block, the blocks one after the other.
// Blocks are cut to at most 8 threads (the kernels accept any power of
// two) to keep thread creation cheap.
static int emu_cooperative(const emuKernel* k, unsigned int grid, unsigned int block, void** params) {
	if (block > 8) block = 8;
	if (block * 2 > sizeof shm / sizeof shm[0]) return -3;
	std::lock_guard<std::mutex> lock(emuBlockMu);
	pthread_t th[8];
	emuThread ts[8];
	pthread_barrier_init(&emuBarrier, NULL, block);
	for (unsigned int t = 0; t < block; t++) {
		ts[t] = emuThread{k, params, grid, block, t};
		// Threads already started would wait at the barrier forever for
		// a missing one: fail loudly rather than hang.
		if (pthread_create(&th[t], NULL, emuThreadMain, &ts[t]) != 0) abort();
	}
	for (unsigned int t = 0; t < block; t++) pthread_join(th[t], NULL);
	pthread_barrier_destroy(&emuBarrier);
	return 0;
}

extern "C" int goluon_emu_launch(const char* name, unsigned int grid, unsigned int block, const char* blob,
		const int* offs, int n) {
	void* params[64];
	if (n > 64) return -2;
	for (int i = 0; i < n; i++) params[i] = (void*)(blob + offs[i]);
	const emuKernel* k = emuFind(name);
	if (k == NULL) return -1;
	if (!strncmp(name, "reduce_block_", 13) || !strncmp(name, "bn_sums_", 8) || !strncmp(name, "bias_relu_sums_", 15) ||
			!strncmp(name, "cumsum_block_", 13))
		return emu_cooperative(k, grid, block, params);
	gridDim = {grid, 1, 1};
	blockDim = {block, 1, 1};
	for (unsigned int b = 0; b < grid; b++) {
		for (unsigned int t = 0; t < block; t++) {
			blockIdx = {b, 0, 0};
			threadIdx = {t, 0, 0};
			k->fn(params);
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

// gemmHalfT is cublasGemmEx on half (H = 2, CUDA_R_16F) or bfloat16 (H =
// 14) matrices with CUBLAS_COMPUTE_32F: products and sums in float, each
// element of C rounded once.
template <int H>
static void gemmHalfT(int ta, int tb, int m, int n, int k, float alpha, const u16* A, int lda, long long sa,
		const u16* B, int ldb, long long sb, float beta, u16* C, int ldc, long long sc, int batch) {
	auto load = [](u16 v) { return H == 2 ? halfToFloat(v) : bf16ToFloat(v); };
	for (int bi = 0; bi < batch; bi++) {
		const u16* a = A + bi * sa;
		const u16* b = B + bi * sb;
		u16* c = C + bi * sc;
		for (int j = 0; j < n; j++) {
			for (int i = 0; i < m; i++) {
				float s = 0;
				for (int l = 0; l < k; l++) {
					float av = load(ta ? a[l + (long long)i * lda] : a[i + (long long)l * lda]);
					float bv = load(tb ? b[j + (long long)l * ldb] : b[l + (long long)j * ldb]);
					s += av * bv;
				}
				u16* out = &c[i + (long long)j * ldc];
				float v = alpha * s + (beta == 0 ? 0.0f : beta * load(*out));
				*out = H == 2 ? floatToHalf(v) : floatToBf16(v);
			}
		}
	}
}

extern "C" void goluon_emu_gemm(int f64, int half, int ta, int tb, int m, int n, int k, double alpha, uintptr_t a,
		int lda, long long sa, uintptr_t b, int ldb, long long sb, double beta, uintptr_t c, int ldc,
		long long sc, int batch) {
	if (half == 2 || half == 14) {
		auto g = half == 2 ? gemmHalfT<2> : gemmHalfT<14>;
		g(ta, tb, m, n, k, (float)alpha, (const u16*)a, lda, sa, (const u16*)b, ldb, sb, (float)beta, (u16*)c,
			ldc, sc, batch);
		return;
	}
	if (f64)
		gemmT<double>(ta, tb, m, n, k, alpha, (const double*)a, lda, sa, (const double*)b, ldb, sb, beta,
			(double*)c, ldc, sc, batch);
	else
		gemmT<float>(ta, tb, m, n, k, alpha, (const float*)a, lda, sa, (const float*)b, ldb, sb, beta,
			(float*)c, ldc, sc, batch);
}
