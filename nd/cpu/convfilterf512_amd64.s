// AVX-512 kernel of the flat filter gradient (convfilterf.go): six
// filters' output gradients against four taps of the input laid out by
// kernel column, 16 positions of the flat plane per vector, the lane sums
// accumulated in place. Written by hand; Go declaration in
// convfilter_amd64.go.

#include "textflag.h"

// FTAP6 loads tap t's 16 inputs at byte offset DX from pointer P and adds
// their products with the six filters' output gradients (Z24–Z29) into
// Z(t), Z(t+4), ..., Z(t+20); FTAP6M loads them under the tail mask K1,
// zeroing the other lanes.
#define FTAP6(P, A0, A1, A2, A3, A4, A5) \
	VMOVUPS (P)(DX*1), Z30;    \
	VFMADD231PS Z30, Z24, A0; \
	VFMADD231PS Z30, Z25, A1; \
	VFMADD231PS Z30, Z26, A2; \
	VFMADD231PS Z30, Z27, A3; \
	VFMADD231PS Z30, Z28, A4; \
	VFMADD231PS Z30, Z29, A5

#define FTAP6M(P, A0, A1, A2, A3, A4, A5) \
	VMOVUPS.Z (P)(DX*1), K1, Z30; \
	VFMADD231PS Z30, Z24, A0;     \
	VFMADD231PS Z30, Z25, A1;     \
	VFMADD231PS Z30, Z26, A2;     \
	VFMADD231PS Z30, Z27, A3;     \
	VFMADD231PS Z30, Z28, A4;     \
	VFMADD231PS Z30, Z29, A5

// FTAPS4 runs T over the four taps.
#define FTAPS4(T) \
	T(R10, Z0, Z4, Z8, Z12, Z16, Z20); \
	T(R11, Z1, Z5, Z9, Z13, Z17, Z21); \
	T(R12, Z2, Z6, Z10, Z14, Z18, Z22); \
	T(R13, Z3, Z7, Z11, Z15, Z19, Z23)

// FPTR sets R = CX + the int64 at byte off of DX.
#define FPTR(off, R) \
	MOVQ off(DX), R; \
	ADDQ CX, R

// func filterFlatF32x512(acc, dy, xs *float32, foffs, toffs *int64, full, tail int)
//
// For the full whole blocks of 16 positions of an image's flat plane and,
// when tail is not 0, one more block under the lane mask tail:
// acc[f][t][lane] += dy_f[q+lane] · xs_t[q+lane] for f < 6, t < 4, q the
// block's first position, where dy_f = dy + foffs[f] and xs_t = xs +
// toffs[t] (bytes). acc holds 6·4·16 floats.
TEXT ·filterFlatF32x512(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), AX
	VMOVUPS 0(AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z2
	VMOVUPS 192(AX), Z3
	VMOVUPS 256(AX), Z4
	VMOVUPS 320(AX), Z5
	VMOVUPS 384(AX), Z6
	VMOVUPS 448(AX), Z7
	VMOVUPS 512(AX), Z8
	VMOVUPS 576(AX), Z9
	VMOVUPS 640(AX), Z10
	VMOVUPS 704(AX), Z11
	VMOVUPS 768(AX), Z12
	VMOVUPS 832(AX), Z13
	VMOVUPS 896(AX), Z14
	VMOVUPS 960(AX), Z15
	VMOVUPS 1024(AX), Z16
	VMOVUPS 1088(AX), Z17
	VMOVUPS 1152(AX), Z18
	VMOVUPS 1216(AX), Z19
	VMOVUPS 1280(AX), Z20
	VMOVUPS 1344(AX), Z21
	VMOVUPS 1408(AX), Z22
	VMOVUPS 1472(AX), Z23
	MOVQ tail+48(FP), AX
	KMOVW AX, K1
	MOVQ dy+8(FP), CX
	MOVQ foffs+24(FP), DX
	FPTR(0, AX)
	FPTR(8, BX)
	FPTR(16, SI)
	FPTR(24, DI)
	FPTR(32, R8)
	FPTR(40, R9)
	MOVQ xs+16(FP), CX
	MOVQ toffs+32(FP), DX
	FPTR(0, R10)
	FPTR(8, R11)
	FPTR(16, R12)
	FPTR(24, R13)
	XORQ DX, DX
	MOVQ full+40(FP), CX
	TESTQ CX, CX
	JEQ  last

block:
	VMOVUPS (AX)(DX*1), Z24
	VMOVUPS (BX)(DX*1), Z25
	VMOVUPS (SI)(DX*1), Z26
	VMOVUPS (DI)(DX*1), Z27
	VMOVUPS (R8)(DX*1), Z28
	VMOVUPS (R9)(DX*1), Z29
	FTAPS4(FTAP6)
	ADDQ $64, DX
	DECQ CX
	JNZ  block

last:
	KORTESTW K1, K1
	JEQ  done
	VMOVUPS.Z (AX)(DX*1), K1, Z24
	VMOVUPS.Z (BX)(DX*1), K1, Z25
	VMOVUPS.Z (SI)(DX*1), K1, Z26
	VMOVUPS.Z (DI)(DX*1), K1, Z27
	VMOVUPS.Z (R8)(DX*1), K1, Z28
	VMOVUPS.Z (R9)(DX*1), K1, Z29
	FTAPS4(FTAP6M)

done:
	MOVQ acc+0(FP), AX
	VMOVUPS Z0, 0(AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z2, 128(AX)
	VMOVUPS Z3, 192(AX)
	VMOVUPS Z4, 256(AX)
	VMOVUPS Z5, 320(AX)
	VMOVUPS Z6, 384(AX)
	VMOVUPS Z7, 448(AX)
	VMOVUPS Z8, 512(AX)
	VMOVUPS Z9, 576(AX)
	VMOVUPS Z10, 640(AX)
	VMOVUPS Z11, 704(AX)
	VMOVUPS Z12, 768(AX)
	VMOVUPS Z13, 832(AX)
	VMOVUPS Z14, 896(AX)
	VMOVUPS Z15, 960(AX)
	VMOVUPS Z16, 1024(AX)
	VMOVUPS Z17, 1088(AX)
	VMOVUPS Z18, 1152(AX)
	VMOVUPS Z19, 1216(AX)
	VMOVUPS Z20, 1280(AX)
	VMOVUPS Z21, 1344(AX)
	VMOVUPS Z22, 1408(AX)
	VMOVUPS Z23, 1472(AX)
	VZEROUPPER
	RET
