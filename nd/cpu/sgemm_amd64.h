// Macros shared by the float32 GEMM micro-kernels (sgemm_amd64.s,
// sgemm512_amd64.s, sgemma_amd64.s): writing a 6-row tile of C held in
// registers (row i in the pair Y(2i), Y(2i+1), or Z(2i), Z(2i+1)) to the
// rows at DI, ldc bytes (SI) apart, adding what C holds or overwriting it;
// prefetching the tile's rows from R8; clearing the tile.

// ADDROW adds the row of C at (DI) into the accumulators lo, hi.
#define ADDROW(lo, hi) \
	VADDPS (DI), lo, lo; \
	VADDPS 32(DI), hi, hi

// STOREROW stores lo, hi to the row at (DI) and moves DI to the next row.
#define STOREROW(lo, hi) \
	VMOVUPS lo, (DI);   \
	VMOVUPS hi, 32(DI); \
	ADDQ    SI, DI

// PREFETCHROW warms the C row at (R8) and moves R8 to the next row.
#define PREFETCHROW \
	PREFETCHT0 (R8);   \
	PREFETCHT0 60(R8); \
	ADDQ       SI, R8

#define ZERO12 \
	VXORPS Y0, Y0, Y0;    \
	VXORPS Y1, Y1, Y1;    \
	VXORPS Y2, Y2, Y2;    \
	VXORPS Y3, Y3, Y3;    \
	VXORPS Y4, Y4, Y4;    \
	VXORPS Y5, Y5, Y5;    \
	VXORPS Y6, Y6, Y6;    \
	VXORPS Y7, Y7, Y7;    \
	VXORPS Y8, Y8, Y8;    \
	VXORPS Y9, Y9, Y9;    \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// START6 begins a whole 6-row tile whose C rows start at R12: it
// prefetches them (R8 walks the rows) and clears the accumulators.
#define START6 \
	MOVQ R12, R8; \
	PREFETCHROW;  \
	PREFETCHROW;  \
	PREFETCHROW;  \
	PREFETCHROW;  \
	PREFETCHROW;  \
	PREFETCHROW;  \
	ZERO12

// STORE6ADD adds the six rows of C at DI into the YMM tile and stores it.
#define STORE6ADD \
	ADDROW(Y0, Y1);    \
	STOREROW(Y0, Y1);  \
	ADDROW(Y2, Y3);    \
	STOREROW(Y2, Y3);  \
	ADDROW(Y4, Y5);    \
	STOREROW(Y4, Y5);  \
	ADDROW(Y6, Y7);    \
	STOREROW(Y6, Y7);  \
	ADDROW(Y8, Y9);    \
	STOREROW(Y8, Y9);  \
	ADDROW(Y10, Y11);  \
	STOREROW(Y10, Y11)

// STORE6 stores the YMM tile over the six rows of C at DI.
#define STORE6 \
	STOREROW(Y0, Y1);  \
	STOREROW(Y2, Y3);  \
	STOREROW(Y4, Y5);  \
	STOREROW(Y6, Y7);  \
	STOREROW(Y8, Y9);  \
	STOREROW(Y10, Y11)

// The same for the ZMM tile (rows of 32 values).

#define ZADDROW(lo, hi) \
	VADDPS (DI), lo, lo; \
	VADDPS 64(DI), hi, hi

#define ZSTOREROW(lo, hi) \
	VMOVUPS lo, (DI);   \
	VMOVUPS hi, 64(DI); \
	ADDQ    SI, DI

#define ZPREFETCHROW \
	PREFETCHT0 (R8);    \
	PREFETCHT0 64(R8);  \
	PREFETCHT0 124(R8); \
	ADDQ       SI, R8

#define ZZERO12 \
	VPXORD Z0, Z0, Z0;    \
	VPXORD Z1, Z1, Z1;    \
	VPXORD Z2, Z2, Z2;    \
	VPXORD Z3, Z3, Z3;    \
	VPXORD Z4, Z4, Z4;    \
	VPXORD Z5, Z5, Z5;    \
	VPXORD Z6, Z6, Z6;    \
	VPXORD Z7, Z7, Z7;    \
	VPXORD Z8, Z8, Z8;    \
	VPXORD Z9, Z9, Z9;    \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11

#define ZSTART6 \
	MOVQ R12, R8; \
	ZPREFETCHROW; \
	ZPREFETCHROW; \
	ZPREFETCHROW; \
	ZPREFETCHROW; \
	ZPREFETCHROW; \
	ZPREFETCHROW; \
	ZZERO12

#define ZSTORE6ADD \
	ZADDROW(Z0, Z1);    \
	ZSTOREROW(Z0, Z1);  \
	ZADDROW(Z2, Z3);    \
	ZSTOREROW(Z2, Z3);  \
	ZADDROW(Z4, Z5);    \
	ZSTOREROW(Z4, Z5);  \
	ZADDROW(Z6, Z7);    \
	ZSTOREROW(Z6, Z7);  \
	ZADDROW(Z8, Z9);    \
	ZSTOREROW(Z8, Z9);  \
	ZADDROW(Z10, Z11);  \
	ZSTOREROW(Z10, Z11)

#define ZSTORE6 \
	ZSTOREROW(Z0, Z1);  \
	ZSTOREROW(Z2, Z3);  \
	ZSTOREROW(Z4, Z5);  \
	ZSTOREROW(Z6, Z7);  \
	ZSTOREROW(Z8, Z9);  \
	ZSTOREROW(Z10, Z11)
