// AVX-512 max pooling of rows of 3-wide windows at stride 2
// (pool_fast.go's maxPool3s2Row): 16 windows per iteration, the three
// rows under them combined first, then the three columns of each window,
// split into even and odd columns with VPERMI2PS (zmmEven, zmmOdd of
// pool512_amd64.s) and shifted by one lane with VALIGND. Every max is Go's
// max: NaN (all ones) where any input is NaN, and a zero maximum negative
// only if every input is. Written by hand; Go declaration in
// pool3_amd64.go.

#include "textflag.h"

// GMAX sets D = max(A, B) as Go's max does (T a temporary; Z30 holds
// 0x7FFFFFFF and Z29 all ones): VMAXPS, then the sign of a zero result
// cleared unless both inputs' signs are set, then all ones where either
// input is NaN. D may be A or B: they are read before D is written.
#define GMAX(A, B, D, T) \
	VPANDD    B, A, T;      \
	VPORD     Z30, T, T;    \
	VCMPPS    $3, B, A, K1; \
	VMAXPS    B, A, D;      \
	VPANDD    T, D, D;      \
	VMOVDQU32 Z29, K1, D

// VLOAD3 sets D to the max of the three rows (SI, DX, R8) at byte offset
// off, masked loads under K.
#define VLOAD3(off, K, D) \
	VMOVUPS.Z off(SI), K, D;   \
	VMOVUPS.Z off(DX), K, Z24; \
	VMOVUPS.Z off(R8), K, Z25; \
	GMAX(D, Z24, D, Z26);      \
	GMAX(D, Z25, D, Z26)

// LANEMASK sets K to the low min(max(R, 0), 16) bits (R in a register,
// clobbers BX, CX and R).
#define LANEMASK(R, K) \
	CMPQ   R, $0;       \
	JGE    2(PC);       \
	XORQ   R, R;        \
	CMPQ   R, $16;      \
	JLE    2(PC);       \
	MOVQ   $16, R;      \
	MOVQ   R, CX;       \
	MOVL   $1, BX;      \
	SHLL   CX, BX;      \
	DECL   BX;          \
	KMOVW  BX, K

// func maxPool3s2RowF32x512(y, r0, r1, r2 *float32, n int)
//
// y[i] = max over rows r0, r1, r2 and columns 2i, 2i+1, 2i+2 (Go's max),
// for i < n; reads columns 0 … 2n of each row.
TEXT ·maxPool3s2RowF32x512(SB), NOSPLIT, $0-40
	MOVQ       y+0(FP), DI
	MOVQ       r0+8(FP), SI
	MOVQ       r1+16(FP), DX
	MOVQ       r2+24(FP), R8
	MOVQ       n+32(FP), R9
	VPTERNLOGD $0xff, Z29, Z29, Z29 // all ones
	VPSRLD     $1, Z29, Z30         // 0x7FFFFFFF
	VMOVUPS    ·zmmEven(SB), Z27
	VMOVUPS    ·zmmOdd(SB), Z28

p3loop:
	TESTQ R9, R9
	JLE   p3done
	// Masks: the 2·cnt+1 columns under cnt = min(n, 16) windows, in three
	// registers of 16 (K2, K3, K4), and the cnt outputs (K5).
	MOVQ R9, R10
	CMPQ R10, $16
	JLE  2(PC)
	MOVQ $16, R10
	LEAQ 1(R10)(R10*1), R11 // 2·cnt + 1
	MOVQ R11, R12
	LANEMASK(R12, K2)
	LEAQ -16(R11), R12
	LANEMASK(R12, K3)
	LEAQ -32(R11), R12
	LANEMASK(R12, K4)
	MOVQ R10, R12
	LANEMASK(R12, K5)

	VLOAD3(0, K2, Z0)
	VLOAD3(64, K3, Z1)
	VLOAD3(128, K4, Z2)

	// Columns 2i (Z3), 2i+1 (Z4) and 2i+2 (Z5) of the row maxima.
	VMOVAPS   Z27, Z3
	VPERMI2PS Z1, Z0, Z3
	VMOVAPS   Z28, Z4
	VPERMI2PS Z1, Z0, Z4
	VALIGND   $1, Z3, Z2, Z5
	GMAX(Z3, Z4, Z6, Z26)
	GMAX(Z6, Z5, Z6, Z26)
	VMOVUPS   Z6, K5, (DI)

	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, R8
	ADDQ $64, DI
	SUBQ $16, R9
	JMP  p3loop

p3done:
	VZEROUPPER
	RET
