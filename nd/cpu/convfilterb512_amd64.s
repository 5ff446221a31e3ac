// AVX-512 kernels of the filter-vectorised direct filter gradient
// (convfilterb.go): 16 filters per vector, one output position per step,
// each tap's input value broadcast. Written by hand; Go declarations in
// convfilter_amd64.go.

#include "textflag.h"

// BROW3 adds, for the three taps of one kernel row at byte offset R from
// the position SI, the broadcast input times the output gradients Z0.
#define BROW3(R, A0, A1, A2) \
	VFMADD231PS.BCST 0(SI)(R*1), Z0, A0; \
	VFMADD231PS.BCST 4(SI)(R*1), Z0, A1; \
	VFMADD231PS.BCST 8(SI)(R*1), Z0, A2

// BROW5 is BROW3 for a kernel row of five taps.
#define BROW5(R, A0, A1, A2, A3, A4) \
	VFMADD231PS.BCST 0(SI)(R*1), Z0, A0;  \
	VFMADD231PS.BCST 4(SI)(R*1), Z0, A1;  \
	VFMADD231PS.BCST 8(SI)(R*1), Z0, A2;  \
	VFMADD231PS.BCST 12(SI)(R*1), Z0, A3; \
	VFMADD231PS.BCST 16(SI)(R*1), Z0, A4

// LOADROWS loads the n row offsets (bytes, int64) at AX into the row
// registers.
#define LOADROWS5 \
	MOVQ 0(AX), R8;   \
	MOVQ 8(AX), R9;   \
	MOVQ 16(AX), R10; \
	MOVQ 24(AX), R11; \
	MOVQ 32(AX), R12

#define LOADROWS9 \
	LOADROWS5;        \
	MOVQ 40(AX), R13; \
	MOVQ 48(AX), BX;  \
	MOVQ 56(AX), CX;  \
	MOVQ 64(AX), DX

// ACC applies OP (load or store) to accumulators Z1..Zn at AX.
#define ACC25(OP) \
	OP(0, Z1); OP(64, Z2); OP(128, Z3); OP(192, Z4); OP(256, Z5);         \
	OP(320, Z6); OP(384, Z7); OP(448, Z8); OP(512, Z9); OP(576, Z10);     \
	OP(640, Z11); OP(704, Z12); OP(768, Z13); OP(832, Z14); OP(896, Z15); \
	OP(960, Z16); OP(1024, Z17); OP(1088, Z18); OP(1152, Z19);            \
	OP(1216, Z20); OP(1280, Z21); OP(1344, Z22); OP(1408, Z23);           \
	OP(1472, Z24); OP(1536, Z25)

#define ACC27(OP) \
	ACC25(OP); OP(1600, Z26); OP(1664, Z27)

#define LD(off, Z) VMOVUPS off(AX), Z
#define ST(off, Z) VMOVUPS Z, off(AX)

// The loop over images, output rows and positions: DI walks the output
// gradients (16 floats per position, contiguous), SI the input position;
// after a row SI skips xrow bytes more, after an image ximg more. The
// counters live in the argument slots hc and ic.
#define POSITIONS(BODY) \
	CMPQ imgs+40(FP), $0;  \
	JLE  done;             \
	CMPQ oh+24(FP), $0;    \
	JLE  done;             \
	CMPQ ow+32(FP), $0;    \
	JLE  done;             \
image:                     \
	MOVQ oh+24(FP), AX;    \
	MOVQ AX, hc+64(FP);    \
row:                       \
	MOVQ ow+32(FP), AX;    \
pos:                       \
	VMOVUPS (DI), Z0;      \
	BODY;                  \
	ADDQ $64, DI;          \
	ADDQ $4, SI;           \
	DECQ AX;               \
	JNZ  pos;              \
	ADDQ xrow+48(FP), SI;  \
	DECQ hc+64(FP);        \
	JNZ  row;              \
	ADDQ ximg+56(FP), SI;  \
	DECQ imgs+40(FP);      \
	JNZ  image;            \
done:

#define BODY9 \
	BROW3(R8, Z1, Z2, Z3);    \
	BROW3(R9, Z4, Z5, Z6);    \
	BROW3(R10, Z7, Z8, Z9);   \
	BROW3(R11, Z10, Z11, Z12); \
	BROW3(R12, Z13, Z14, Z15); \
	BROW3(R13, Z16, Z17, Z18); \
	BROW3(BX, Z19, Z20, Z21);  \
	BROW3(CX, Z22, Z23, Z24);  \
	BROW3(DX, Z25, Z26, Z27)

#define BODY5 \
	BROW5(R8, Z1, Z2, Z3, Z4, Z5);      \
	BROW5(R9, Z6, Z7, Z8, Z9, Z10);     \
	BROW5(R10, Z11, Z12, Z13, Z14, Z15); \
	BROW5(R11, Z16, Z17, Z18, Z19, Z20); \
	BROW5(R12, Z21, Z22, Z23, Z24, Z25)

// func filterBcast3F32x512(acc *float32, dyt, x *float32, oh, ow, imgs, xrow, ximg, hc int, rows *int64)
TEXT ·filterBcast3F32x512(SB), NOSPLIT, $0-80
	MOVQ acc+0(FP), AX
	ACC27(LD)
	MOVQ rows+72(FP), AX
	LOADROWS9
	MOVQ dyt+8(FP), DI
	MOVQ x+16(FP), SI
	POSITIONS(BODY9)
	MOVQ acc+0(FP), AX
	ACC27(ST)
	VZEROUPPER
	RET

// func filterBcast5F32x512(acc *float32, dyt, x *float32, oh, ow, imgs, xrow, ximg, hc int, rows *int64)
TEXT ·filterBcast5F32x512(SB), NOSPLIT, $0-80
	MOVQ acc+0(FP), AX
	ACC25(LD)
	MOVQ rows+72(FP), AX
	LOADROWS5
	MOVQ dyt+8(FP), DI
	MOVQ x+16(FP), SI
	POSITIONS(BODY5)
	MOVQ acc+0(FP), AX
	ACC25(ST)
	VZEROUPPER
	RET
