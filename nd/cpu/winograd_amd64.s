// AVX2 row kernels of the Winograd F(2×2, 3×3) convolutions, 8 tiles per
// iteration; winograd_rows.go has the plain Go definitions (the same
// operations in the same order) and the Go declarations are in
// winograd_amd64.go. Written by hand.
//
// Tile t of a group starts at column 2t of its rows, so 8 tiles read 16
// (+2) consecutive values of a row: VSHUFPS $0x88 / $0xDD split two YMM
// loads into their even and odd columns (lanes in the order 0 1 4 5 2 3 6 7)
// and VPERMPD $0xD8 puts them back in tile order. Writing outputs is the
// reverse: VUNPCKLPS / VUNPCKHPS and VPERM2F128.

#include "textflag.h"

// Common registers: CX groups left; DX the distance between planes ξ and
// ξ+1 in bytes, R12 three of them, R14 four; R13 the output (or input)
// plane of row i of the 4×4 transformed tile.

// EVENODD splits the 16 values lo:hi into even (E) and odd (O) columns.
#define EVENODD(lo, hi, E, O) \
	VSHUFPS $0x88, hi, lo, E; \
	VPERMPD $0xD8, E, E;      \
	VSHUFPS $0xDD, hi, lo, O; \
	VPERMPD $0xD8, O, O

// INROW stores row i of V = Bᵀ d B for 8 tiles, where row i of Bᵀ d is
// ra OP rb (two input rows, elementwise); the row's columns d0..d3 of each
// tile become d0−d2, d1+d2, d2−d1, d1−d3.
#define INROW(ra, rb, OP) \
	VMOVUPS (ra), Y0;        \
	OP      (rb), Y0, Y0;    \
	VMOVUPS 32(ra), Y1;      \
	OP      32(rb), Y1, Y1;  \
	VMOVUPS 8(ra), Y2;       \
	OP      8(rb), Y2, Y2;   \
	VMOVUPS 40(ra), Y3;      \
	OP      40(rb), Y3, Y3;  \
	EVENODD(Y0, Y1, Y4, Y5); \
	EVENODD(Y2, Y3, Y6, Y7); \
	VSUBPS  Y6, Y4, Y8;      \
	VADDPS  Y6, Y5, Y9;      \
	VSUBPS  Y5, Y6, Y10;     \
	VSUBPS  Y7, Y5, Y11;     \
	VMOVUPS Y8, (R13);       \
	VMOVUPS Y9, (R13)(DX*1); \
	VMOVUPS Y10, (R13)(DX*2); \
	VMOVUPS Y11, (R13)(R12*1)

// func winoInputRowF32(src *float32, lds int, dst *float32, ldd int, groups int)
TEXT ·winoInputRowF32(SB), NOSPLIT, $0-40
	MOVQ src+0(FP), SI
	MOVQ lds+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ ldd+24(FP), DX
	MOVQ groups+32(FP), CX
	SHLQ $2, BX
	SHLQ $2, DX
	LEAQ (SI)(BX*1), R9  // input row 1
	LEAQ (SI)(BX*2), R10 // row 2
	LEAQ (R9)(BX*2), R11 // row 3
	LEAQ (DX)(DX*2), R12
	MOVQ DX, R14
	SHLQ $2, R14

inloop:
	MOVQ DI, R13
	INROW(SI, R10, VSUBPS) // r0 − r2
	ADDQ R14, R13
	INROW(R9, R10, VADDPS) // r1 + r2
	ADDQ R14, R13
	INROW(R10, R9, VSUBPS) // r2 − r1
	ADDQ R14, R13
	INROW(R9, R11, VSUBPS) // r1 − r3
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $32, DI
	DECQ CX
	JNZ  inloop
	VZEROUPPER
	RET

// OUTCOL computes column j of Aᵀ M for 8 tiles: S = (m0j + m1j) + m2j and
// D = (m1j − m2j) − m3j, with plane (i, j) at (row pointer)(IDX).
#define OUTCOL(IDX, S, D) \
	VMOVUPS (SI)IDX, S;     \
	VADDPS  (R9)IDX, S, S;  \
	VADDPS  (R10)IDX, S, S; \
	VMOVUPS (R9)IDX, D;     \
	VSUBPS  (R10)IDX, D, D; \
	VSUBPS  (R11)IDX, D, D

// OUTSTORE interleaves the two output columns A (even) and B (odd) of 8
// tiles into 16 consecutive values at dst.
#define OUTSTORE(A, B, dst0, dst1) \
	VUNPCKLPS  B, A, Y12;        \
	VUNPCKHPS  B, A, Y13;        \
	VPERM2F128 $0x20, Y13, Y12, Y14; \
	VPERM2F128 $0x31, Y13, Y12, Y15; \
	VMOVUPS    Y14, dst0;        \
	VMOVUPS    Y15, dst1

// func winoOutputRowF32(m *float32, ldm int, out *float32, ldo int, groups int)
TEXT ·winoOutputRowF32(SB), NOSPLIT, $0-40
	MOVQ m+0(FP), SI
	MOVQ ldm+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ ldo+24(FP), BX
	MOVQ groups+32(FP), CX
	SHLQ $2, DX
	SHLQ $2, BX
	LEAQ (DX)(DX*2), R12
	MOVQ DX, R14
	SHLQ $2, R14
	LEAQ (SI)(R14*1), R9  // planes of row 1
	LEAQ (SI)(R14*2), R10 // row 2
	LEAQ (R9)(R14*2), R11 // row 3
	XORQ AX, AX

outloop:
	OUTCOL((AX*1), Y0, Y4)
	OUTCOL((DX*1), Y1, Y5)
	OUTCOL((DX*2), Y2, Y6)
	OUTCOL((R12*1), Y3, Y7)
	VADDPS Y1, Y0, Y8  // (s0 + s1) + s2
	VADDPS Y2, Y8, Y8
	VSUBPS Y2, Y1, Y9  // (s1 − s2) − s3
	VSUBPS Y3, Y9, Y9
	VADDPS Y5, Y4, Y10 // (d0 + d1) + d2
	VADDPS Y6, Y10, Y10
	VSUBPS Y6, Y5, Y11 // (d1 − d2) − d3
	VSUBPS Y7, Y11, Y11
	OUTSTORE(Y8, Y9, (DI), 32(DI))
	OUTSTORE(Y10, Y11, (DI)(BX*1), 32(DI)(BX*1))
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $64, DI
	DECQ CX
	JNZ  outloop
	VZEROUPPER
	RET

// GOROW stores row i of dM = A dY Aᵀ for 8 tiles from row i of A dY,
// columns a0 and a1: a0, a0 + a1, a0 − a1, −a1 (Y15 is the sign mask).
#define GOROW(a0, a1) \
	VMOVUPS a0, (R13);        \
	VADDPS  a1, a0, Y8;       \
	VMOVUPS Y8, (R13)(DX*1);  \
	VSUBPS  a1, a0, Y9;       \
	VMOVUPS Y9, (R13)(DX*2);  \
	VXORPS  Y15, a1, Y10;     \
	VMOVUPS Y10, (R13)(R12*1)

// func winoGradOutRowF32(dy *float32, ldy int, dst *float32, ldd int, groups int)
TEXT ·winoGradOutRowF32(SB), NOSPLIT, $0-40
	MOVQ dy+0(FP), SI
	MOVQ ldy+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ ldd+24(FP), DX
	MOVQ groups+32(FP), CX
	SHLQ $2, BX
	SHLQ $2, DX
	LEAQ (SI)(BX*1), R9 // row 1 of the output gradients
	LEAQ (DX)(DX*2), R12
	MOVQ DX, R14
	SHLQ $2, R14
	VPCMPEQD Y15, Y15, Y15
	VPSLLD   $31, Y15, Y15 // 0x80000000 in every lane

goloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	EVENODD(Y0, Y1, Y2, Y3) // y00, y01
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y1
	EVENODD(Y0, Y1, Y4, Y5) // y10, y11
	MOVQ DI, R13
	GOROW(Y2, Y3)           // y0
	ADDQ R14, R13
	VADDPS Y4, Y2, Y6       // y0 + y1
	VADDPS Y5, Y3, Y7
	GOROW(Y6, Y7)
	ADDQ R14, R13
	VSUBPS Y4, Y2, Y6       // y0 − y1
	VSUBPS Y5, Y3, Y7
	GOROW(Y6, Y7)
	ADDQ R14, R13
	VXORPS Y15, Y4, Y6      // −y1
	VXORPS Y15, Y5, Y7
	GOROW(Y6, Y7)
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $32, DI
	DECQ CX
	JNZ  goloop
	VZEROUPPER
	RET
