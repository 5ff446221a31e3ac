// AVX-512 kernel of the direct filter gradient (convfilter.go): two output
// channels' widened output gradients against eight taps of the input,
// 16 positions per vector, the lane sums accumulated in place. Written by
// hand; Go declaration in convfilter_amd64.go.

#include "textflag.h"

// FTAP loads tap t's 16 inputs at byte offset DX from pointer P (masked
// by K when masked) and adds their products with Z16 and Z17 into Z(t) and
// Z(t+8).
#define FTAP(P, A0, A1) \
	VMOVUPS (P)(DX*1), Z18;    \
	VFMADD231PS Z18, Z16, A0; \
	VFMADD231PS Z18, Z17, A1

#define FTAPM(P, A0, A1) \
	VMOVUPS.Z (P)(DX*1), K1, Z18; \
	VFMADD231PS Z18, Z16, A0;     \
	VFMADD231PS Z18, Z17, A1

// FTAPS runs FTAP (or FTAPM) over the eight taps.
#define FTAPS(T) \
	T(SI, Z0, Z8);   \
	T(DI, Z1, Z9);   \
	T(R8, Z2, Z10);  \
	T(R9, Z3, Z11);  \
	T(R10, Z4, Z12); \
	T(R11, Z5, Z13); \
	T(R12, Z6, Z14); \
	T(R13, Z7, Z15)

// MOVE advances the tap pointers by the bytes at XS and the output
// gradients' (AX, BX) by those at DYS.
#define MOVE(XS, DYS) \
	MOVQ XS, CX;  \
	ADVANCE(CX);  \
	MOVQ DYS, CX; \
	ADDQ CX, AX;  \
	ADDQ CX, BX

// TAPPTR sets R = CX + 4·(the int32 at byte off of DX): a tap's pointer.
#define TAPPTR(off, R) \
	MOVLQSX off(DX), R; \
	LEAQ    (CX)(R*4), R

// ADVANCE adds the byte stride S to the eight tap pointers.
#define ADVANCE(S) \
	ADDQ S, SI;  \
	ADDQ S, DI;  \
	ADDQ S, R8;  \
	ADDQ S, R9;  \
	ADDQ S, R10; \
	ADDQ S, R11; \
	ADDQ S, R12; \
	ADDQ S, R13

// func filterTapsF32x512(acc *float32, dy0, dy1, x *float32, offs *int32, rows, full, tail, imgs, xrow, dyrow, ximg, dyimg, rowc int)
//
// For imgs images, for rows rows of each, for the full whole blocks of 16
// positions of a row and, when tail is not 0, one more block under the
// lane mask tail: acc[o][t][lane] += dy_o[q+lane] · x[q+lane+offs[t]]
// for o < 2, t < 8, q the block's first position. Between rows the input
// advances by xrow bytes and the output gradients by dyrow; after an
// image's last row, by ximg and dyimg more. acc holds 2·8·16 floats; rowc
// is scratch (the row count left).
TEXT ·filterTapsF32x512(SB), NOSPLIT, $0-112
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
	MOVQ tail+56(FP), AX
	KMOVW AX, K1
	// The tap pointers: x + 4·offs[t].
	MOVQ x+24(FP), CX
	MOVQ offs+32(FP), DX
	TAPPTR(0, SI)
	TAPPTR(4, DI)
	TAPPTR(8, R8)
	TAPPTR(12, R9)
	TAPPTR(16, R10)
	TAPPTR(20, R11)
	TAPPTR(24, R12)
	TAPPTR(28, R13)
	MOVQ dy0+8(FP), AX
	MOVQ dy1+16(FP), BX
	CMPQ imgs+64(FP), $0
	JLE  done
	CMPQ rows+40(FP), $0
	JLE  done

image:
	MOVQ rows+40(FP), CX
	MOVQ CX, rowc+104(FP)

row:
	XORQ DX, DX
	MOVQ full+48(FP), CX
	TESTQ CX, CX
	JEQ  last

block:
	VMOVUPS (AX)(DX*1), Z16
	VMOVUPS (BX)(DX*1), Z17
	FTAPS(FTAP)
	ADDQ $64, DX
	DECQ CX
	JNZ  block

last:
	KORTESTW K1, K1
	JEQ  nextrow
	VMOVUPS.Z (AX)(DX*1), K1, Z16
	VMOVUPS.Z (BX)(DX*1), K1, Z17
	FTAPS(FTAPM)

nextrow:
	MOVE(xrow+72(FP), dyrow+80(FP))
	DECQ rowc+104(FP)
	JNZ  row
	MOVE(ximg+88(FP), dyimg+96(FP))
	DECQ imgs+64(FP)
	JNZ  image

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
	VZEROUPPER
	RET

