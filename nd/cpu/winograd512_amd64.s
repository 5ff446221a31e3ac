// AVX-512 (ZMM) versions of the Winograd F(2×2, 3×3) row kernels of
// winograd_amd64.s (winograd_rows.go). They keep the groups of 8 tiles of
// the AVX2 kernels and do two groups (16 tiles) per iteration, then a last
// odd group in the low halves of the registers (reading and writing only
// what the AVX2 kernels do). Every value gets the same float32 operations
// in the same order, so the results are the same bit for bit
// (kernels512_test.go).
//
// Tile t of a group starts at column 2t of its rows, so 16 tiles read 32
// (+2) consecutive values of a row: VPERMI2PS with the indices zmmEven and
// zmmOdd (pool512_amd64.s) splits two ZMM loads into their even and odd
// columns, in tile order. Writing outputs is the reverse, with zmmZipLo
// and zmmZipHi. Uses AVX-512 F, and VL for VPXORD on YMM registers (the
// last odd group of winoGradOutRowF32x512). Written by hand; Go
// declarations in kernels512_amd64.go.

#include "textflag.h"

// Common registers: CX groups left; DX the distance between planes ξ and
// ξ+1 in bytes, R12 three of them, R14 four; R13 the output (or input)
// plane of row i of the 4×4 transformed tile; Z12 and Z13 two permutation
// indices.

// ZEVENODD splits the 32 values lo:hi into even (E) and odd (O) columns
// (Z12 = zmmEven, Z13 = zmmOdd).
#define ZEVENODD(lo, hi, E, O) \
	VMOVAPS   Z12, E;    \
	VPERMI2PS hi, lo, E; \
	VMOVAPS   Z13, O;    \
	VPERMI2PS hi, lo, O

// ZINCOLS computes, from the four column vectors d0…d3 (Z4…Z7), the row's
// columns of V: d0−d2, d1+d2, d2−d1, d1−d3 in Z8…Z11.
#define ZINCOLS \
	VSUBPS Z6, Z4, Z8; \
	VADDPS Z6, Z5, Z9; \
	VSUBPS Z5, Z6, Z10; \
	VSUBPS Z7, Z5, Z11

// ZINROW2 stores row i of V = Bᵀ d B for 16 tiles, where row i of Bᵀ d is
// ra OP rb (two input rows, elementwise), as INROW does for 8.
#define ZINROW2(ra, rb, OP) \
	VMOVUPS (ra), Z0;          \
	OP      (rb), Z0, Z0;      \
	VMOVUPS 64(ra), Z1;        \
	OP      64(rb), Z1, Z1;    \
	VMOVUPS 8(ra), Z2;         \
	OP      8(rb), Z2, Z2;     \
	VMOVUPS 72(ra), Z3;        \
	OP      72(rb), Z3, Z3;    \
	ZEVENODD(Z0, Z1, Z4, Z5);  \
	ZEVENODD(Z2, Z3, Z6, Z7);  \
	ZINCOLS;                   \
	VMOVUPS Z8, (R13);         \
	VMOVUPS Z9, (R13)(DX*1);   \
	VMOVUPS Z10, (R13)(DX*2);  \
	VMOVUPS Z11, (R13)(R12*1)

// ZINROW1 is ZINROW2 for 8 tiles: columns 0–17 of the rows, the results in
// the low halves (the high halves come from whatever Z1 and Z3 hold).
#define ZINROW1(ra, rb, OP) \
	VMOVUPS (ra), Z0;          \
	OP      (rb), Z0, Z0;      \
	VMOVUPS 8(ra), Z2;         \
	OP      8(rb), Z2, Z2;     \
	ZEVENODD(Z0, Z1, Z4, Z5);  \
	ZEVENODD(Z2, Z3, Z6, Z7);  \
	ZINCOLS;                   \
	VMOVUPS Y8, (R13);         \
	VMOVUPS Y9, (R13)(DX*1);   \
	VMOVUPS Y10, (R13)(DX*2);  \
	VMOVUPS Y11, (R13)(R12*1)

// func winoInputRowF32x512(src *float32, lds int, dst *float32, ldd int, groups int)
TEXT ·winoInputRowF32x512(SB), NOSPLIT, $0-40
	MOVQ    src+0(FP), SI
	MOVQ    lds+8(FP), BX
	MOVQ    dst+16(FP), DI
	MOVQ    ldd+24(FP), DX
	MOVQ    groups+32(FP), CX
	SHLQ    $2, BX
	SHLQ    $2, DX
	LEAQ    (SI)(BX*1), R9  // input row 1
	LEAQ    (SI)(BX*2), R10 // row 2
	LEAQ    (R9)(BX*2), R11 // row 3
	LEAQ    (DX)(DX*2), R12
	MOVQ    DX, R14
	SHLQ    $2, R14
	VMOVUPS ·zmmEven(SB), Z12
	VMOVUPS ·zmmOdd(SB), Z13

in2:
	CMPQ CX, $2
	JLT  in1
	MOVQ DI, R13
	ZINROW2(SI, R10, VSUBPS) // r0 − r2
	ADDQ R14, R13
	ZINROW2(R9, R10, VADDPS) // r1 + r2
	ADDQ R14, R13
	ZINROW2(R10, R9, VSUBPS) // r2 − r1
	ADDQ R14, R13
	ZINROW2(R9, R11, VSUBPS) // r1 − r3
	ADDQ $128, SI
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $128, R11
	ADDQ $64, DI
	SUBQ $2, CX
	JMP  in2

in1:
	TESTQ CX, CX
	JEQ   indone
	MOVQ  DI, R13
	ZINROW1(SI, R10, VSUBPS)
	ADDQ  R14, R13
	ZINROW1(R9, R10, VADDPS)
	ADDQ  R14, R13
	ZINROW1(R10, R9, VSUBPS)
	ADDQ  R14, R13
	ZINROW1(R9, R11, VSUBPS)

indone:
	VZEROUPPER
	RET

// ZOUTCOL computes column j of Aᵀ M for 16 tiles (ZMM registers) or 8 (YMM):
// S = (m0j + m1j) + m2j and D = (m1j − m2j) − m3j, with plane (i, j) at
// (row pointer)(IDX).
#define ZOUTCOL(IDX, S, D) \
	VMOVUPS (SI)IDX, S;     \
	VADDPS  (R9)IDX, S, S;  \
	VADDPS  (R10)IDX, S, S; \
	VMOVUPS (R9)IDX, D;     \
	VSUBPS  (R10)IDX, D, D; \
	VSUBPS  (R11)IDX, D, D

// ZOUTROWS combines the columns s0…s3 (V0…V3) and d0…d3 (V4…V7) into the
// two output columns of both output rows, V8…V11; the V are all Z or all Y
// registers.
#define ZOUTROWS(V0, V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11) \
	VADDPS V1, V0, V8;   \
	VADDPS V2, V8, V8;   \
	VSUBPS V2, V1, V9;   \
	VSUBPS V3, V9, V9;   \
	VADDPS V5, V4, V10;  \
	VADDPS V6, V10, V10; \
	VSUBPS V6, V5, V11;  \
	VSUBPS V7, V11, V11

// ZZIP interleaves lanes 0–7 (IDX = zmmZipLo) or 8–15 (zmmZipHi) of the
// output columns A (even) and B (odd) into 16 consecutive values at dst.
#define ZZIP(IDX, A, B, dst) \
	VMOVAPS   IDX, Z14;  \
	VPERMI2PS B, A, Z14; \
	VMOVUPS   Z14, dst

// func winoOutputRowF32x512(m *float32, ldm int, out *float32, ldo int, groups int)
TEXT ·winoOutputRowF32x512(SB), NOSPLIT, $0-40
	MOVQ    m+0(FP), SI
	MOVQ    ldm+8(FP), DX
	MOVQ    out+16(FP), DI
	MOVQ    ldo+24(FP), BX
	MOVQ    groups+32(FP), CX
	SHLQ    $2, DX
	SHLQ    $2, BX
	LEAQ    (DX)(DX*2), R12
	MOVQ    DX, R14
	SHLQ    $2, R14
	LEAQ    (SI)(R14*1), R9  // planes of row 1
	LEAQ    (SI)(R14*2), R10 // row 2
	LEAQ    (R9)(R14*2), R11 // row 3
	XORQ    AX, AX
	VMOVUPS ·zmmZipLo(SB), Z12
	VMOVUPS ·zmmZipHi(SB), Z13

out2:
	CMPQ CX, $2
	JLT  out1
	ZOUTCOL((AX*1), Z0, Z4)
	ZOUTCOL((DX*1), Z1, Z5)
	ZOUTCOL((DX*2), Z2, Z6)
	ZOUTCOL((R12*1), Z3, Z7)
	ZOUTROWS(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11)
	ZZIP(Z12, Z8, Z9, (DI))
	ZZIP(Z13, Z8, Z9, 64(DI))
	ZZIP(Z12, Z10, Z11, (DI)(BX*1))
	ZZIP(Z13, Z10, Z11, 64(DI)(BX*1))
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $128, DI
	SUBQ $2, CX
	JMP  out2

out1:
	TESTQ CX, CX
	JEQ   outdone
	ZOUTCOL((AX*1), Y0, Y4)
	ZOUTCOL((DX*1), Y1, Y5)
	ZOUTCOL((DX*2), Y2, Y6)
	ZOUTCOL((R12*1), Y3, Y7)
	ZOUTROWS(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11)
	ZZIP(Z12, Z8, Z9, (DI))
	ZZIP(Z12, Z10, Z11, (DI)(BX*1))

outdone:
	VZEROUPPER
	RET

// ZGOROW stores row i of dM = A dY Aᵀ for 16 tiles (ZMM registers) or 8
// (YMM) from row i of A dY, columns a0 and a1: a0, a0 + a1, a0 − a1, −a1
// (S is the sign mask, T0…T2 temporaries).
#define ZGOROW(a0, a1, S, T0, T1, T2) \
	VMOVUPS a0, (R13);        \
	VADDPS  a1, a0, T0;       \
	VMOVUPS T0, (R13)(DX*1);  \
	VSUBPS  a1, a0, T1;       \
	VMOVUPS T1, (R13)(DX*2);  \
	VPXORD  S, a1, T2;        \
	VMOVUPS T2, (R13)(R12*1)

// ZGOROWS stores the four rows of dM from y00, y01 (V2, V3) and y10, y11
// (V4, V5), the registers all Z or all Y: rows y0, y0 + y1, y0 − y1, −y1
// of A dY (V6, V7 temporaries).
#define ZGOROWS(V2, V3, V4, V5, V6, V7, S, T0, T1, T2) \
	MOVQ   DI, R13;                    \
	ZGOROW(V2, V3, S, T0, T1, T2);     \
	ADDQ   R14, R13;                   \
	VADDPS V4, V2, V6;                 \
	VADDPS V5, V3, V7;                 \
	ZGOROW(V6, V7, S, T0, T1, T2);     \
	ADDQ   R14, R13;                   \
	VSUBPS V4, V2, V6;                 \
	VSUBPS V5, V3, V7;                 \
	ZGOROW(V6, V7, S, T0, T1, T2);     \
	ADDQ   R14, R13;                   \
	VPXORD S, V4, V6;                  \
	VPXORD S, V5, V7;                  \
	ZGOROW(V6, V7, S, T0, T1, T2)

// func winoGradOutRowF32x512(dy *float32, ldy int, dst *float32, ldd int, groups int)
TEXT ·winoGradOutRowF32x512(SB), NOSPLIT, $0-40
	MOVQ       dy+0(FP), SI
	MOVQ       ldy+8(FP), BX
	MOVQ       dst+16(FP), DI
	MOVQ       ldd+24(FP), DX
	MOVQ       groups+32(FP), CX
	SHLQ       $2, BX
	SHLQ       $2, DX
	LEAQ       (SI)(BX*1), R9 // row 1 of the output gradients
	LEAQ       (DX)(DX*2), R12
	MOVQ       DX, R14
	SHLQ       $2, R14
	VMOVUPS    ·zmmEven(SB), Z12
	VMOVUPS    ·zmmOdd(SB), Z13
	VPTERNLOGD $0xff, Z15, Z15, Z15
	VPSLLD     $31, Z15, Z15 // 0x80000000 in every lane

go2:
	CMPQ    CX, $2
	JLT     go1
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	ZEVENODD(Z0, Z1, Z2, Z3) // y00, y01
	VMOVUPS (R9), Z0
	VMOVUPS 64(R9), Z1
	ZEVENODD(Z0, Z1, Z4, Z5) // y10, y11
	ZGOROWS(Z2, Z3, Z4, Z5, Z6, Z7, Z15, Z8, Z9, Z10)
	ADDQ    $128, SI
	ADDQ    $128, R9
	ADDQ    $64, DI
	SUBQ    $2, CX
	JMP     go2

go1:
	TESTQ   CX, CX
	JEQ     godone
	VMOVUPS (SI), Z0 // columns 0–15; Z1 is not used
	ZEVENODD(Z0, Z1, Z2, Z3)
	VMOVUPS (R9), Z0
	ZEVENODD(Z0, Z1, Z4, Z5)
	ZGOROWS(Y2, Y3, Y4, Y5, Y6, Y7, Y15, Y8, Y9, Y10)

godone:
	VZEROUPPER
	RET
