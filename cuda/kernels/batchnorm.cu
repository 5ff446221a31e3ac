// batchnorm.cu: fused batch normalisation (backend.BatchNormKernels), with
// nd/cpu's arithmetic: per-channel sums in double (Σa and Σa·b: Σx and Σx²
// for the statistics, Σg and Σg·x for the gradients), the per-channel
// coefficients computed in double and rounded to T, and one fused
// multiply-add pass per element (y = s·x + t, dx = a·g + (b·x + c)).
// A channel's sums are split over parts blocks whose partials the finish
// kernels add in part order, so the results do not depend on scheduling.
// The elementwise kernels (bn_sums, bn_apply, bn_dx) also take Float16 and
// BFloat16 storage S for x, y, g and dx beside float per-channel arrays T:
// each value decoded to float, computed as the float32 kernel computes it
// and rounded once (backend.HalfBatchNormer).
#include "common.cuh"

template <typename T> __device__ __forceinline__ T fmaT(T a, T b, T c);
template <> __device__ __forceinline__ float fmaT(float a, float b, float c) { return fmaf(a, b, c); }
template <> __device__ __forceinline__ double fmaT(double a, double b, double c) { return fma(a, b, c); }

// channelSums: block k sums part k % parts of channel k / parts of an
// array viewed as [outer, C, inner]: term(off, s1, s2) adds element off's
// terms to the two sums, written to out[2k] and out[2k+1]. blockDim.x
// must be a power of two; the dynamic shared memory holds 2·blockDim.x
// doubles.
template <typename F>
__device__ __forceinline__ void channelSums(i64 outer, i64 C, i64 inner, i64 parts, double* out, F term) {
	extern __shared__ double shm[];
	const i64 m = outer * inner;
	for (i64 k = blockIdx.x; k < C * parts; k += gridDim.x) {
		const i64 c = k / parts, p = k % parts;
		const i64 j1 = m * (p + 1) / parts;
		double s1 = 0, s2 = 0;
		for (i64 j = m * p / parts + threadIdx.x; j < j1; j += blockDim.x)
			term(((j / inner) * C + c) * inner + j % inner, s1, s2);
		shm[threadIdx.x] = s1;
		shm[blockDim.x + threadIdx.x] = s2;
		__syncthreads();
		for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
			if (threadIdx.x < w) {
				shm[threadIdx.x] += shm[threadIdx.x + w];
				shm[blockDim.x + threadIdx.x] += shm[blockDim.x + threadIdx.x + w];
			}
			__syncthreads();
		}
		if (threadIdx.x == 0) {
			out[2 * k] = shm[0];
			out[2 * k + 1] = shm[blockDim.x];
		}
		__syncthreads();
	}
}

// bn_sums: Σa and Σa·b per channel part (channelSums), a and b of storage
// type S. bias_relu_sums: the bias + ReLU backward pass in one read of g
// and y: dx = g where y > 0, else 0 (the ReluGrad kernel's rule), and Σdx
// per channel part.
#define BN_SUMS(SUF, S)                                                                               \
	extern "C" __global__ void bn_sums_##SUF(const S* a, const S* b, i64 outer, i64 C, i64 inner,    \
			i64 parts, double* out) {                                                          \
		channelSums(outer, C, inner, parts, out, [&](i64 off, double& s1, double& s2) {          \
			const double v = (double)a[off];                                                 \
			s1 += v;                                                                         \
			s2 += v * (double)b[off];                                                        \
		});                                                                                      \
	}
#define BIAS_RELU_SUMS(SUF, T)                                                                        \
	extern "C" __global__ void bias_relu_sums_##SUF(T* dx, const T* g, const T* y, i64 outer, i64 C, \
			i64 inner, i64 parts, double* out) {                                               \
		channelSums(outer, C, inner, parts, out, [&](i64 off, double& s1, double&) {             \
			const T v = y[off] > (T)0 ? g[off] : (T)0;                                       \
			dx[off] = v;                                                                     \
			s1 += (double)v;                                                                 \
		});                                                                                      \
	}                                                                                                \
	/* channel_sum_finish: d[c] = the first sums of channel c's partials. */                        \
	extern "C" __global__ void channel_sum_finish_##SUF(const double* part, i64 parts, i64 C, T* d) { \
		GRID_LOOP(c, C) {                                                                        \
			double s = 0;                                                                    \
			for (i64 p = 0; p < parts; p++) s += part[2 * (c * parts + p)];                  \
			d[c] = (T)s;                                                                     \
		}                                                                                        \
	}

// partSums adds channel c's partials in part order.
__device__ __forceinline__ void partSums(const double* part, i64 parts, i64 c, double& s1, double& s2) {
	s1 = 0;
	s2 = 0;
	for (i64 p = 0; p < parts; p++) {
		s1 += part[2 * (c * parts + p)];
		s2 += part[2 * (c * parts + p) + 1];
	}
}

// bnApply writes y = s·x + t per channel, rounded to S (then max(·, 0)
// with relu, where a NaN or −0 passes through: the ReLU of the rounded
// value, as the unary op applies it).
template <typename S, typename T, bool relu>
__device__ __forceinline__ void bnApply(S* y, const S* x, i64 n, i64 C, i64 inner, const T* mean, const T* invstd,
		const T* gamma, const T* beta) {
	GRID_LOOP(i, n) {
		const i64 c = (i / inner) % C;
		const double s = (double)invstd[c] * (gamma ? (double)gamma[c] : 1.0);
		const T t = (T)((beta ? (double)beta[c] : 0.0) - (double)mean[c] * s);
		S v = (S)fmaT<T>((T)s, (T)x[i], t);
		if (relu && (T)v < 0) v = (S)(T)0;
		y[i] = v;
	}
}

// bn_apply and bn_apply_relu: y = s·x + t with s = invstd·gamma,
// t = beta − mean·s (then ReLU); bn_dx: dx = a·g + (b·x + c), or a·g
// without batch statistics; x, y, g and dx of storage type S, the
// per-channel arrays of T.
#define BN_ELEM(SUF, S, T)                                                                            \
	BN_SUMS(SUF, S)                                                                               \
	extern "C" __global__ void bn_apply_##SUF(S* y, const S* x, i64 n, i64 C, i64 inner, const T* mean, \
			const T* invstd, const T* gamma, const T* beta) {                                  \
		bnApply<S, T, false>(y, x, n, C, inner, mean, invstd, gamma, beta);                       \
	}                                                                                                \
	extern "C" __global__ void bn_apply_relu_##SUF(S* y, const S* x, i64 n, i64 C, i64 inner,         \
			const T* mean, const T* invstd, const T* gamma, const T* beta) {                   \
		bnApply<S, T, true>(y, x, n, C, inner, mean, invstd, gamma, beta);                        \
	}                                                                                                \
	extern "C" __global__ void bn_dx_##SUF(S* dx, const S* g, const S* x, i64 n, i64 C, i64 inner,  \
			const T* coef, i64 batchStats) {                                                   \
		GRID_LOOP(i, n) {                                                                        \
			const i64 c = (i / inner) % C;                                                   \
			if (!batchStats) {                                                               \
				dx[i] = (S)(coef[3 * c] * (T)g[i]);                                      \
				continue;                                                                \
			}                                                                                \
			dx[i] = (S)fmaT<T>(coef[3 * c], (T)g[i], fmaT<T>(coef[3 * c + 1], (T)x[i], coef[3 * c + 2])); \
		}                                                                                        \
	}

#define BN_KERNELS(SUF, T)                                                                            \
	BN_ELEM(SUF, T, T)                                                                            \
	BIAS_RELU_SUMS(SUF, T)                                                                        \
	/* bn_stats_finish: mean = Σx/m, variance = max(Σx²/m − mean², 0). */                          \
	extern "C" __global__ void bn_stats_finish_##SUF(const double* part, i64 parts, i64 C, double m, \
			T* mean, T* var) {                                                                 \
		GRID_LOOP(c, C) {                                                                        \
			double sx, sxx;                                                                  \
			partSums(part, parts, c, sx, sxx);                                               \
			const double mu = sx / m;                                                        \
			const double v = sxx / m - mu * mu;                                              \
			mean[c] = (T)mu;                                                                 \
			var[c] = (T)(v > 0 ? v : 0);                                                     \
		}                                                                                        \
	}                                                                                                \
	/* bn_train_stats: invstd = 1/√(var + eps) and the running statistics' update, each value */     \
	/* rounded as the unary and binary kernels round it (backend.BatchNormStatsKernels).      */     \
	extern "C" __global__ void bn_train_stats_##SUF(i64 C, T* invstd, const T* mean, const T* var,   \
			T* runMean, T* runVar, double eps, double mom, double meanScale, double varScale) {    \
		GRID_LOOP(c, C) {                                                                        \
			const T v = var[c] + (T)eps;                                                     \
			invstd[c] = (T)(1.0 / sqrt((double)v));                                          \
			if (runMean) {                                                                   \
				const T b = mean[c] * (T)meanScale, r = runMean[c] * (T)mom;             \
				runMean[c] = r + b;                                                      \
			}                                                                                \
			if (runVar) {                                                                    \
				const T b = var[c] * (T)varScale, r = runVar[c] * (T)mom;                \
				runVar[c] = r + b;                                                       \
			}                                                                                \
		}                                                                                        \
	}                                                                                                \
	/* bn_eval_stats: mean = runMean·1 and invstd = 1/√(runVar + eps), as the unary kernels. */     \
	extern "C" __global__ void bn_eval_stats_##SUF(i64 C, T* mean, T* invstd, const T* runMean,      \
			const T* runVar, double eps) {                                                     \
		GRID_LOOP(c, C) {                                                                        \
			mean[c] = runMean[c] * (T)1.0;                                                   \
			const T v = runVar[c] + (T)eps;                                                  \
			invstd[c] = (T)(1.0 / sqrt((double)v));                                          \
		}                                                                                        \
	}                                                                                                \
	/* bn_backward_finish: dbeta = Σg, dgamma = invstd·(Σg·x − mean·Σg) and  */                   \
	/* dx's coefficients a, b, c per channel (coef[3c..3c+2]).               */                   \
	extern "C" __global__ void bn_backward_finish_##SUF(const double* part, i64 parts, i64 C, double m, \
			const T* mean, const T* invstd, const T* gamma, i64 batchStats, T* dgamma, T* dbeta, \
			T* coef) {                                                                         \
		GRID_LOOP(c, C) {                                                                        \
			double sg, sgx;                                                                  \
			partSums(part, parts, c, sg, sgx);                                               \
			const double mu = (double)mean[c], is = (double)invstd[c];                       \
			const double db = sg, dg = is * (sgx - mu * sg);                                 \
			dbeta[c] = (T)db;                                                                \
			dgamma[c] = (T)dg;                                                               \
			const double k = (gamma ? (double)gamma[c] : 1.0) * is;                          \
			double b = 0, cc = 0;                                                            \
			if (batchStats) {                                                                \
				b = -k * is * dg / m;                                                    \
				cc = k * (is * dg * mu - db) / m;                                        \
			}                                                                                \
			coef[3 * c] = (T)k;                                                              \
			coef[3 * c + 1] = (T)b;                                                          \
			coef[3 * c + 2] = (T)cc;                                                         \
		}                                                                                        \
	}
BN_KERNELS(f32, float)
BN_KERNELS(f64, double)
BN_ELEM(f16, hf16, float)
BN_ELEM(bf16, hbf16, float)
