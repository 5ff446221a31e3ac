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

// The backward pass (pool_fast.go's maxPool3s2BackRow): each window's
// gradient goes to the first of its inputs, in row-major window order,
// equal to its forward output y. Per block of 16 windows, a first pass
// checks that every window has such an input (else it returns, and the
// caller takes the scalar route for the rest of the row); a second pass
// selects, per window row, the first equal inputs (K masks against a
// running "seen" mask, K6) and adds the gradients into that row of dx:
// column 2i+1 gets window i's middle input, column 2i window i−1's right
// input and then window i's left one, the order of the scalar loop, whose
// other additions are of +0 (dx holds no −0: it starts at +0).
// Registers: SI, R8, R9 the x rows; DI, R10, R11 the dx rows; AX y, BX
// dy; R12 windows left, R13 windows done.

// CXLANEMASK sets K to the low min(max(CX, 0), 16) bits (T a temporary;
// a shift by CL, so that no BMI2 instruction is needed).
#define CXLANEMASK(T, K) \
	CMPQ  CX, $0;  \
	JGE   2(PC);   \
	XORQ  CX, CX;  \
	CMPQ  CX, $16; \
	JLE   2(PC);   \
	MOVQ  $16, CX; \
	MOVL  $1, T;   \
	SHLL  CX, T;   \
	DECL  T;       \
	KMOVW T, K

// PMASKS sets K2…K4 to the columns under the block's cnt = min(R12, 16)
// windows (2·cnt+1 of them, in three registers of 16), K5 to the windows,
// and R14 to cnt (clobbers R15, CX, DX).
#define PMASKS \
	MOVQ R12, R14;           \
	CMPQ R14, $16;           \
	JLE  2(PC);              \
	MOVQ $16, R14;           \
	LEAQ 1(R14)(R14*1), R15; \
	MOVQ R15, CX;            \
	CXLANEMASK(DX, K2);   \
	LEAQ -16(R15), CX;       \
	CXLANEMASK(DX, K3);   \
	LEAQ -32(R15), CX;       \
	CXLANEMASK(DX, K4);   \
	MOVQ R14, CX;            \
	CXLANEMASK(DX, K5)

// PLOADSPLIT loads the 2·cnt+1 columns of a row at base under the
// block's windows (Z0…Z2, masks K2…K4) and splits them into even (E) and
// odd (O) columns: E holds each window's left input, O its middle one.
#define PLOADSPLIT(base, E, O) \
	VMOVUPS.Z (base), K2, Z0;    \
	VMOVUPS.Z 64(base), K3, Z1;  \
	VMOVUPS.Z 128(base), K4, Z2; \
	VMOVAPS   Z27, E;            \
	VPERMI2PS Z1, Z0, E;         \
	VMOVAPS   Z28, O;            \
	VPERMI2PS Z1, Z0, O

// PROWX loads the three columns of the block's windows in the x row at
// base: left (Z3), middle (Z4) and right (Z5) inputs of each window.
#define PROWX(base) \
	PLOADSPLIT(base, Z3, Z4); \
	VALIGND $1, Z3, Z2, Z5

// PSEEN marks in K6 the windows whose left, middle or right input in
// Z3…Z5 equals y (Z6).
#define PSEEN \
	VCMPPS $0, Z6, Z3, K1; \
	KORW   K1, K6, K6;     \
	VCMPPS $0, Z6, Z4, K1; \
	KORW   K1, K6, K6;     \
	VCMPPS $0, Z6, Z5, K1; \
	KORW   K1, K6, K6

// PSEL sets D to the gradients (Z7) of the windows whose input X is the
// first equal to y not yet seen (K6), zero elsewhere, and marks them.
#define PSEL(X, D) \
	VCMPPS    $0, Z6, X, K1; \
	KANDNW    K1, K6, K7;    \
	KORW      K7, K6, K6;    \
	VMOVAPS.Z Z7, K7, D

// PROWDX adds the selected gradients of one window row (x row xb, dx row
// db) into dx (Z26 zero; Z24, Z25 zmmZipLo, zmmZipHi).
#define PROWDX(xb, db) \
	PROWX(xb);                    \
	PSEL(Z3, Z8);                 \
	PSEL(Z4, Z9);                 \
	PSEL(Z5, Z10);                \
	PLOADSPLIT(db, Z11, Z12);     \
	VALIGND   $15, Z26, Z10, Z13; \
	VADDPS    Z13, Z11, Z11;      \
	VADDPS    Z8, Z11, Z11;       \
	VADDPS    Z9, Z12, Z12;       \
	VALIGND   $15, Z10, Z26, Z13; \
	VADDPS    Z13, Z2, Z2;        \
	VMOVAPS   Z24, Z0;            \
	VPERMI2PS Z12, Z11, Z0;       \
	VMOVAPS   Z25, Z1;            \
	VPERMI2PS Z12, Z11, Z1;       \
	VMOVUPS   Z0, K2, (db);       \
	VMOVUPS   Z1, K3, 64(db);     \
	VMOVUPS   Z2, K4, 128(db)

// func maxPool3s2BackRowF32x512(dx0, dx1, dx2, x0, x1, x2, y, dy *float32, n int) int
//
// For windows i < n whose inputs are columns 2i, 2i+1, 2i+2 of rows x0…x2
// (a repeated row for a window less than three high, with its dx row
// repeated too), adds dy[i] into the same place of dx0…dx2 at the first
// input equal to y[i]; stops before the first block of 16 windows with a
// window that has none (a NaN), and returns the number of windows done.
TEXT ·maxPool3s2BackRowF32x512(SB), NOSPLIT, $0-80
	MOVQ    dx0+0(FP), DI
	MOVQ    dx1+8(FP), R10
	MOVQ    dx2+16(FP), R11
	MOVQ    x0+24(FP), SI
	MOVQ    x1+32(FP), R8
	MOVQ    x2+40(FP), R9
	MOVQ    y+48(FP), AX
	MOVQ    dy+56(FP), BX
	MOVQ    n+64(FP), R12
	XORQ    R13, R13
	VMOVUPS ·zmmEven(SB), Z27
	VMOVUPS ·zmmOdd(SB), Z28
	VMOVUPS ·zmmZipLo(SB), Z24
	VMOVUPS ·zmmZipHi(SB), Z25
	VPXORD  Z26, Z26, Z26

pbloop:
	TESTQ     R12, R12
	JLE       pbdone
	PMASKS
	VMOVUPS.Z (AX), K5, Z6
	VMOVUPS.Z (BX), K5, Z7

	// Pass 1: every window has an input equal to its y.
	KXORW K6, K6, K6
	PROWX(SI)
	PSEEN
	PROWX(R8)
	PSEEN
	PROWX(R9)
	PSEEN
	KANDW K5, K6, K1
	KMOVW K1, CX
	KMOVW K5, DX
	CMPL  CX, DX
	JNE   pbdone

	// Pass 2: the gradients, row by row.
	KXORW K6, K6, K6
	PROWDX(SI, DI)
	PROWDX(R8, R10)
	PROWDX(R9, R11)

	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $128, R9
	ADDQ $128, DI
	ADDQ $128, R10
	ADDQ $128, R11
	ADDQ $64, AX
	ADDQ $64, BX
	ADDQ R14, R13
	SUBQ $16, R12
	JMP  pbloop

pbdone:
	MOVQ R13, ret+72(FP)
	VZEROUPPER
	RET
