// AVX2 kernels of 2×2, stride-2 max pooling (pool_fast.go), 8 windows per
// iteration. The 16 inputs of a row under 8 windows split into their even
// and odd columns with VSHUFPS, which leaves the windows in lane order
// 0 1 4 5 2 3 6 7; the forward pass restores the order with VPERMPD, the
// backward pass puts y and dy into the same order and interleaves its
// results back with VUNPCKLPS/VUNPCKHPS, which undo it. Written by hand;
// Go declarations in pool_amd64.go, definitions in pool_fast.go.

#include "textflag.h"

// LOADWIN loads the 8 windows at r0 (SI) and r1 (DX): a, b (row 0 even,
// odd) in Y4, Y5 and c, d (row 1) in Y6, Y7, in lane order 0 1 4 5 2 3 6 7.
#define LOADWIN \
	VMOVUPS (SI), Y0;            \
	VMOVUPS 32(SI), Y1;          \
	VMOVUPS (DX), Y2;            \
	VMOVUPS 32(DX), Y3;          \
	VSHUFPS $0x88, Y1, Y0, Y4;   \
	VSHUFPS $0xDD, Y1, Y0, Y5;   \
	VSHUFPS $0x88, Y3, Y2, Y6;   \
	VSHUFPS $0xDD, Y3, Y2, Y7

// func maxPool2x2RowF32(y, r0, r1 *float32, groups int)
//
// y[i] = max(r0[2i], r0[2i+1], r1[2i], r1[2i+1]) for i < 8·groups, with
// Go's max: NaN if any input is NaN, and +0 over −0.
TEXT ·maxPool2x2RowF32(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ groups+24(FP), CX
	VPCMPEQD Y14, Y14, Y14
	VPSRLD   $1, Y14, Y14 // 0x7FFFFFFF

fwdloop:
	LOADWIN
	VMAXPS  Y5, Y4, Y8
	VMAXPS  Y7, Y6, Y9
	VMAXPS  Y9, Y8, Y8
	// The sign of a zero maximum: negative only if every input's is
	// (a positive or negative maximum keeps its own sign).
	VANDPS  Y5, Y4, Y10
	VANDPS  Y6, Y10, Y10
	VANDPS  Y7, Y10, Y10
	VORPS   Y14, Y10, Y10
	VANDPS  Y10, Y8, Y8
	// NaN where any input is NaN.
	VCMPPS  $3, Y5, Y4, Y11
	VCMPPS  $3, Y7, Y6, Y12
	VORPS   Y12, Y11, Y11
	VORPS   Y11, Y8, Y8
	VPERMPD $0xD8, Y8, Y8
	VMOVUPS Y8, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     fwdloop
	VZEROUPPER
	RET

// func maxPool2x2BackRowF32(d0, d1, r0, r1, y, dy *float32, groups int) int
//
// For each of 8·groups windows, writes dy[i] to the first of its inputs
// r0[2i], r0[2i+1], r1[2i], r1[2i+1] that equals y[i] (into the same
// places of d0 and d1) and 0 to the other three. It stops before the first
// group of 8 whose y holds a NaN and returns how many windows it did.
TEXT ·maxPool2x2BackRowF32(SB), NOSPLIT, $0-64
	MOVQ d0+0(FP), DI
	MOVQ d1+8(FP), R8
	MOVQ r0+16(FP), SI
	MOVQ r1+24(FP), DX
	MOVQ y+32(FP), R9
	MOVQ dy+40(FP), R10
	MOVQ groups+48(FP), CX
	XORQ BX, BX

bwdloop:
	TESTQ   CX, CX
	JEQ     bwddone
	VMOVUPS (R9), Y8
	VCMPPS  $3, Y8, Y8, Y9
	VMOVMSKPS Y9, AX
	TESTL   AX, AX
	JNE     bwddone
	VPERMPD $0xD8, Y8, Y8  // y in window lane order
	VMOVUPS (R10), Y9
	VPERMPD $0xD8, Y9, Y9  // g likewise
	LOADWIN
	VCMPPS  $0, Y8, Y4, Y10 // m0 = a == y
	VCMPPS  $0, Y8, Y5, Y11
	VANDNPS Y11, Y10, Y11   // m1 = (b == y) &^ m0
	VORPS   Y11, Y10, Y12   // seen
	VCMPPS  $0, Y8, Y6, Y13
	VANDNPS Y13, Y12, Y13   // m2 = (c == y) &^ seen
	VORPS   Y13, Y12, Y12
	VANDNPS Y9, Y12, Y12    // d = g &^ (seen | m2)
	VANDPS  Y9, Y10, Y10    // a = g & m0
	VANDPS  Y9, Y11, Y11    // b = g & m1
	VANDPS  Y9, Y13, Y13    // c = g & m2
	VUNPCKLPS Y11, Y10, Y0
	VUNPCKHPS Y11, Y10, Y1
	VUNPCKLPS Y12, Y13, Y2
	VUNPCKHPS Y12, Y13, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (R8)
	VMOVUPS Y3, 32(R8)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	ADDQ    $64, R8
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $8, BX
	DECQ    CX
	JMP     bwdloop

bwddone:
	MOVQ BX, ret+56(FP)
	VZEROUPPER
	RET
