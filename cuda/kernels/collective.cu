// collective.cu: the sum of one buffer per virtual GPU of one physical
// device, by a single kernel that reads every buffer in place (virtual GPUs
// share the device's address space) and writes the sum into all of them.
#include "common.cuh"

// VSUM_MAX is the most buffers one vsum launch adds (its pointer
// parameters); mirrored by vsumMax in cuda/vreduce.go.
#define VSUM_MAX 8

// VSUM defines vsum_SUF: for each of the n elements, the sum
// ((p0 + p1) + p2) + ... of the first nb buffers, added in that order in
// T, written back into each of them. Unused pointers are ignored.
#define VSUM(SUF, T)                                                                                 \
	extern "C" __global__ void vsum_##SUF(i64 n, i64 nb, T* p0, T* p1, T* p2, T* p3, T* p4, T* p5, \
	                                      T* p6, T* p7) {                                          \
		T* p[VSUM_MAX] = {p0, p1, p2, p3, p4, p5, p6, p7};                                       \
		GRID_LOOP(i, n) {                                                                        \
			T acc = p0[i];                                                                   \
			for (i64 j = 1; j < nb; j++) acc = acc + p[j][i];                                \
			for (i64 j = 0; j < nb; j++) p[j][i] = acc;                                      \
		}                                                                                        \
	}

VSUM(f32, float)
VSUM(f64, double)
