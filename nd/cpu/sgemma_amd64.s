// Micro-kernels of the float32 GEMM that read A in place instead of from a
// packed panel (see sgemm.go, "A in place"): sgemmPanelA (AVX2, 6×16) and
// sgemmPanel2A (AVX-512, 6×32). They are sgemmPanel and sgemmPanel2 with
// another way of finding A's values: value (i, p) of a panel is at
// a + i·rs + p·cs bytes. Row i of the panel is reached as (AX)(R9*s) for
// i < 3 and (R10)(R9*s) for i ≥ 3, where R10 = AX + 3·rs and s is 1 or 2,
// so one loop serves a row-major A (rs = lda, cs = 1 element) and a
// transposed one (rs = 1, cs = lda). Each element of C gets the same FMAs
// in the same order as with the packed kernels, so the results are the
// same bit for bit. m must be a positive multiple of 6: the caller packs
// a ragged last panel and runs it through the packed kernel.

#include "textflag.h"
#include "sgemm_amd64.h"

// ASTEP6 does one k step for six rows (YMM tile, one B panel at BX).
#define ASTEP6 \
	VMOVUPS      (BX), Y12;          \
	VMOVUPS      32(BX), Y13;        \
	VBROADCASTSS (AX), Y14;          \
	VFMADD231PS  Y12, Y14, Y0;       \
	VFMADD231PS  Y13, Y14, Y1;       \
	VBROADCASTSS (AX)(R9*1), Y15;    \
	VFMADD231PS  Y12, Y15, Y2;       \
	VFMADD231PS  Y13, Y15, Y3;       \
	VBROADCASTSS (AX)(R9*2), Y14;    \
	VFMADD231PS  Y12, Y14, Y4;       \
	VFMADD231PS  Y13, Y14, Y5;       \
	VBROADCASTSS (R10), Y15;         \
	VFMADD231PS  Y12, Y15, Y6;       \
	VFMADD231PS  Y13, Y15, Y7;       \
	VBROADCASTSS (R10)(R9*1), Y14;   \
	VFMADD231PS  Y12, Y14, Y8;       \
	VFMADD231PS  Y13, Y14, Y9;       \
	VBROADCASTSS (R10)(R9*2), Y15;   \
	VFMADD231PS  Y12, Y15, Y10;      \
	VFMADD231PS  Y13, Y15, Y11;      \
	ADDQ         DX, BX;             \
	ADDQ         R13, AX;            \
	ADDQ         R13, R10

// func sgemmPanelA(k int, a *float32, rs, cs int, m int, b *float32, ldb int, c *float32, ldc int, accum int)
//
// Registers: AX row 0 of A at step p, R10 row 3, R9 rs bytes, R13 cs
// bytes, R15 the panel's first value, BX b, R14 start of B, CX k counter,
// DX ldb bytes, R8 prefetch address, SI ldc bytes, DI C row, R12 C panel,
// R11 rows left. k and accum stay in the frame.
TEXT ·sgemmPanelA(SB), NOSPLIT, $0-80
	MOVQ a+8(FP), R15
	MOVQ rs+16(FP), R9
	SHLQ $2, R9
	MOVQ cs+24(FP), R13
	SHLQ $2, R13
	MOVQ m+32(FP), R11
	MOVQ b+40(FP), R14
	MOVQ ldb+48(FP), DX
	SHLQ $2, DX
	MOVQ c+56(FP), R12
	MOVQ ldc+64(FP), SI
	SHLQ $2, SI

afull:
	START6
	MOVQ R15, AX
	LEAQ (R15)(R9*2), R10
	ADDQ R9, R10
	MOVQ R14, BX
	MOVQ k+0(FP), CX

	// Prefetch the next column panel of B as sgemmPanel does.
	MOVQ $64, R8
	CMPQ DX, $64
	JNE  aloop
	MOVQ CX, R8
	SHLQ $6, R8

aloop:
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 60(BX)(R8*1)
	ASTEP6
	DECQ CX
	JNE  aloop

	MOVQ  R12, DI
	CMPQ  accum+72(FP), $0
	JEQ   aover
	STORE6ADD
	JMP   anext

aover:
	STORE6

anext:
	MOVQ DI, R12
	LEAQ (R9)(R9*2), AX // the next panel starts 6 rows on
	LEAQ (R15)(AX*2), R15
	SUBQ $6, R11
	JGT  afull
	VZEROUPPER
	RET

// ZASTEP6 does one k step for six rows (ZMM tile, B panels at BX, R14).
#define ZASTEP6 \
	VMOVUPS      (BX), Z12;          \
	VMOVUPS      (R14), Z13;         \
	VBROADCASTSS (AX), Z14;          \
	VFMADD231PS  Z12, Z14, Z0;       \
	VFMADD231PS  Z13, Z14, Z1;       \
	VBROADCASTSS (AX)(R9*1), Z15;    \
	VFMADD231PS  Z12, Z15, Z2;       \
	VFMADD231PS  Z13, Z15, Z3;       \
	VBROADCASTSS (AX)(R9*2), Z14;    \
	VFMADD231PS  Z12, Z14, Z4;       \
	VFMADD231PS  Z13, Z14, Z5;       \
	VBROADCASTSS (R10), Z15;         \
	VFMADD231PS  Z12, Z15, Z6;       \
	VFMADD231PS  Z13, Z15, Z7;       \
	VBROADCASTSS (R10)(R9*1), Z14;   \
	VFMADD231PS  Z12, Z14, Z8;       \
	VFMADD231PS  Z13, Z14, Z9;       \
	VBROADCASTSS (R10)(R9*2), Z15;   \
	VFMADD231PS  Z12, Z15, Z10;      \
	VFMADD231PS  Z13, Z15, Z11;      \
	ADDQ         DX, BX;             \
	ADDQ         DX, R14;            \
	ADDQ         R13, AX;            \
	ADDQ         R13, R10

// func sgemmPanel2A(k int, a *float32, rs, cs int, m int, b1, b2 *float32, ldb int, c *float32, ldc int, accum int)
//
// Registers as in sgemmPanelA, with BX and R14 walking the two B panels;
// k, b1, b2 and accum stay in the frame.
TEXT ·sgemmPanel2A(SB), NOSPLIT, $0-88
	MOVQ a+8(FP), R15
	MOVQ rs+16(FP), R9
	SHLQ $2, R9
	MOVQ cs+24(FP), R13
	SHLQ $2, R13
	MOVQ m+32(FP), R11
	MOVQ ldb+56(FP), DX
	SHLQ $2, DX
	MOVQ c+64(FP), R12
	MOVQ ldc+72(FP), SI
	SHLQ $2, SI

zafull:
	ZSTART6
	MOVQ R15, AX
	LEAQ (R15)(R9*2), R10
	ADDQ R9, R10
	MOVQ b1+40(FP), BX
	MOVQ b2+48(FP), R14
	MOVQ k+0(FP), CX

	// Prefetch the next pair of column panels as sgemmPanel2 does.
	MOVQ $128, R8
	CMPQ DX, $64
	JNE  zaloop
	MOVQ CX, R8
	SHLQ $7, R8

zaloop:
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 (R14)(R8*1)
	ZASTEP6
	DECQ CX
	JNE  zaloop

	MOVQ  R12, DI
	CMPQ  accum+80(FP), $0
	JEQ   zaover
	ZSTORE6ADD
	JMP   zanext

zaover:
	ZSTORE6

zanext:
	MOVQ DI, R12
	LEAQ (R9)(R9*2), AX
	LEAQ (R15)(AX*2), R15
	SUBQ $6, R11
	JGT  zafull
	VZEROUPPER
	RET
