// Int8 GEMM micro-kernels (see qgemm.go): unsigned bytes of A times the
// packed signed bytes of B, 4 inputs per int32 lane, with the store that
// adds the column correction and optionally dequantizes.
//
// Arguments (qTile): k4+0 a+8 lda+16 m+24 b+32 pstride+40 kstride+48
// c+56 ldc+64 corr+72 scale+80 bias+88. Rows of A are at SI, SI+R8,
// SI+2·R8, SI+R9 (3·lda), SI+4·R8, SI+R10 (5·lda); panels of B at BX,
// BX+DX, BX+2·DX, BX+R11 (3·pstride), BX moving R13 (kstride) bytes a
// k-group.

#include "textflag.h"

#define QSETUP \
	MOVQ k4+0(FP), CX;       \
	MOVQ a+8(FP), SI;        \
	MOVQ lda+16(FP), R8;     \
	LEAQ (R8)(R8*2), R9;     \
	LEAQ (R8)(R8*4), R10;    \
	MOVQ b+32(FP), BX;       \
	MOVQ pstride+40(FP), DX; \
	MOVQ kstride+48(FP), R13; \
	LEAQ (DX)(DX*2), R11

#define QSTORESETUP \
	MOVQ c+56(FP), DI;      \
	MOVQ ldc+64(FP), AX;    \
	SHLQ $2, AX;            \
	MOVQ corr+72(FP), R12;  \
	MOVQ scale+80(FP), R13; \
	MOVQ bias+88(FP), R14;  \
	MOVQ m+24(FP), CX

// ---- AVX-512 VNNI: a 6×64 tile, row r in Z(4r)..Z(4r+3) ----

#define VLOADB \
	VMOVDQU32 (BX), Z24;       \
	VMOVDQU32 (BX)(DX*1), Z25; \
	VMOVDQU32 (BX)(DX*2), Z26; \
	VMOVDQU32 (BX)(R11*1), Z27

#define VROW(addr, t, c0, c1, c2, c3) \
	VPBROADCASTD addr, t;     \
	VPDPBUSD     Z24, t, c0;  \
	VPDPBUSD     Z25, t, c1;  \
	VPDPBUSD     Z26, t, c2;  \
	VPDPBUSD     Z27, t, c3

#define VNEXT \
	ADDQ $4, SI;  \
	ADDQ R13, BX; \
	DECQ CX

#define VSTOREF(c0, c1, c2, c3) \
	VPADDD    (R12), c0, c0;    \
	VPADDD    64(R12), c1, c1;  \
	VPADDD    128(R12), c2, c2; \
	VPADDD    192(R12), c3, c3; \
	VCVTDQ2PS c0, c0;           \
	VCVTDQ2PS c1, c1;           \
	VCVTDQ2PS c2, c2;           \
	VCVTDQ2PS c3, c3;           \
	VMULPS    (R13), c0, c0;    \
	VMULPS    64(R13), c1, c1;  \
	VMULPS    128(R13), c2, c2; \
	VMULPS    192(R13), c3, c3; \
	VADDPS    (R14), c0, c0;    \
	VADDPS    64(R14), c1, c1;  \
	VADDPS    128(R14), c2, c2; \
	VADDPS    192(R14), c3, c3; \
	VMOVUPS   c0, (DI);         \
	VMOVUPS   c1, 64(DI);       \
	VMOVUPS   c2, 128(DI);      \
	VMOVUPS   c3, 192(DI);      \
	ADDQ      AX, DI

#define VSTOREI(c0, c1, c2, c3) \
	VPADDD    (R12), c0, c0;    \
	VPADDD    64(R12), c1, c1;  \
	VPADDD    128(R12), c2, c2; \
	VPADDD    192(R12), c3, c3; \
	VMOVDQU32 c0, (DI);         \
	VMOVDQU32 c1, 64(DI);       \
	VMOVDQU32 c2, 128(DI);      \
	VMOVDQU32 c3, 192(DI);      \
	ADDQ      AX, DI

// func qTileVNNI(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32)
TEXT ·qTileVNNI(SB), NOSPLIT, $0-96
	QSETUP
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ   m+24(FP), AX
	CMPQ   AX, $6
	JEQ    vm6
	CMPQ   AX, $5
	JEQ    vm5
	CMPQ   AX, $4
	JEQ    vm4
	CMPQ   AX, $3
	JEQ    vm3
	CMPQ   AX, $2
	JEQ    vm2

vm1:
	VLOADB
	VROW((SI), Z28, Z0, Z1, Z2, Z3)
	VNEXT
	JNZ vm1
	JMP vstore

vm2:
	VLOADB
	VROW((SI), Z28, Z0, Z1, Z2, Z3)
	VROW((SI)(R8*1), Z29, Z4, Z5, Z6, Z7)
	VNEXT
	JNZ vm2
	JMP vstore

vm3:
	VLOADB
	VROW((SI), Z28, Z0, Z1, Z2, Z3)
	VROW((SI)(R8*1), Z29, Z4, Z5, Z6, Z7)
	VROW((SI)(R8*2), Z28, Z8, Z9, Z10, Z11)
	VNEXT
	JNZ vm3
	JMP vstore

vm4:
	VLOADB
	VROW((SI), Z28, Z0, Z1, Z2, Z3)
	VROW((SI)(R8*1), Z29, Z4, Z5, Z6, Z7)
	VROW((SI)(R8*2), Z28, Z8, Z9, Z10, Z11)
	VROW((SI)(R9*1), Z29, Z12, Z13, Z14, Z15)
	VNEXT
	JNZ vm4
	JMP vstore

vm5:
	VLOADB
	VROW((SI), Z28, Z0, Z1, Z2, Z3)
	VROW((SI)(R8*1), Z29, Z4, Z5, Z6, Z7)
	VROW((SI)(R8*2), Z28, Z8, Z9, Z10, Z11)
	VROW((SI)(R9*1), Z29, Z12, Z13, Z14, Z15)
	VROW((SI)(R8*4), Z28, Z16, Z17, Z18, Z19)
	VNEXT
	JNZ vm5
	JMP vstore

vm6:
	VLOADB
	VROW((SI), Z28, Z0, Z1, Z2, Z3)
	VROW((SI)(R8*1), Z29, Z4, Z5, Z6, Z7)
	VROW((SI)(R8*2), Z28, Z8, Z9, Z10, Z11)
	VROW((SI)(R9*1), Z29, Z12, Z13, Z14, Z15)
	VROW((SI)(R8*4), Z28, Z16, Z17, Z18, Z19)
	VROW((SI)(R10*1), Z29, Z20, Z21, Z22, Z23)
	VNEXT
	JNZ vm6

vstore:
	QSTORESETUP
	TESTQ R13, R13
	JEQ   vint
	VSTOREF(Z0, Z1, Z2, Z3)
	DECQ  CX
	JEQ   vdone
	VSTOREF(Z4, Z5, Z6, Z7)
	DECQ  CX
	JEQ   vdone
	VSTOREF(Z8, Z9, Z10, Z11)
	DECQ  CX
	JEQ   vdone
	VSTOREF(Z12, Z13, Z14, Z15)
	DECQ  CX
	JEQ   vdone
	VSTOREF(Z16, Z17, Z18, Z19)
	DECQ  CX
	JEQ   vdone
	VSTOREF(Z20, Z21, Z22, Z23)
	JMP   vdone

vint:
	VSTOREI(Z0, Z1, Z2, Z3)
	DECQ CX
	JEQ  vdone
	VSTOREI(Z4, Z5, Z6, Z7)
	DECQ CX
	JEQ  vdone
	VSTOREI(Z8, Z9, Z10, Z11)
	DECQ CX
	JEQ  vdone
	VSTOREI(Z12, Z13, Z14, Z15)
	DECQ CX
	JEQ  vdone
	VSTOREI(Z16, Z17, Z18, Z19)
	DECQ CX
	JEQ  vdone
	VSTOREI(Z20, Z21, Z22, Z23)

vdone:
	VZEROUPPER
	RET

// ---- AVX2: a 4×16 tile, row r in Y(2r), Y(2r+1); Y8:Y9 the panel's
// k-group, Y10 sixteen int16 ones, Y11 the broadcast activations ----

#define ALOADB \
	VMOVDQU (BX), Y8; \
	VMOVDQU 32(BX), Y9

#define AROW(addr, c0, c1) \
	VPBROADCASTD addr, Y11;       \
	VPMADDUBSW   Y8, Y11, Y12;    \
	VPMADDUBSW   Y9, Y11, Y13;    \
	VPMADDWD     Y10, Y12, Y12;   \
	VPMADDWD     Y10, Y13, Y13;   \
	VPADDD       Y12, c0, c0;     \
	VPADDD       Y13, c1, c1

#define ASTOREF(c0, c1) \
	VPADDD    (R12), c0, c0;   \
	VPADDD    32(R12), c1, c1; \
	VCVTDQ2PS c0, c0;          \
	VCVTDQ2PS c1, c1;          \
	VMULPS    (R13), c0, c0;   \
	VMULPS    32(R13), c1, c1; \
	VADDPS    (R14), c0, c0;   \
	VADDPS    32(R14), c1, c1; \
	VMOVUPS   c0, (DI);        \
	VMOVUPS   c1, 32(DI);      \
	ADDQ      AX, DI

#define ASTOREI(c0, c1) \
	VPADDD  (R12), c0, c0;   \
	VPADDD  32(R12), c1, c1; \
	VMOVDQU c0, (DI);        \
	VMOVDQU c1, 32(DI);      \
	ADDQ    AX, DI

// func qTileAVX2(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32)
TEXT ·qTileAVX2(SB), NOSPLIT, $0-96
	QSETUP
	VPXOR    Y0, Y0, Y0
	VPXOR    Y1, Y1, Y1
	VPXOR    Y2, Y2, Y2
	VPXOR    Y3, Y3, Y3
	VPXOR    Y4, Y4, Y4
	VPXOR    Y5, Y5, Y5
	VPXOR    Y6, Y6, Y6
	VPXOR    Y7, Y7, Y7
	VPCMPEQW Y10, Y10, Y10
	VPSRLW   $15, Y10, Y10
	MOVQ     m+24(FP), AX
	CMPQ     AX, $4
	JEQ      am4
	CMPQ     AX, $3
	JEQ      am3
	CMPQ     AX, $2
	JEQ      am2

am1:
	ALOADB
	AROW((SI), Y0, Y1)
	VNEXT
	JNZ am1
	JMP astore

am2:
	ALOADB
	AROW((SI), Y0, Y1)
	AROW((SI)(R8*1), Y2, Y3)
	VNEXT
	JNZ am2
	JMP astore

am3:
	ALOADB
	AROW((SI), Y0, Y1)
	AROW((SI)(R8*1), Y2, Y3)
	AROW((SI)(R8*2), Y4, Y5)
	VNEXT
	JNZ am3
	JMP astore

am4:
	ALOADB
	AROW((SI), Y0, Y1)
	AROW((SI)(R8*1), Y2, Y3)
	AROW((SI)(R8*2), Y4, Y5)
	AROW((SI)(R9*1), Y6, Y7)
	VNEXT
	JNZ am4

astore:
	QSTORESETUP
	TESTQ R13, R13
	JEQ   aint
	ASTOREF(Y0, Y1)
	DECQ  CX
	JEQ   adone
	ASTOREF(Y2, Y3)
	DECQ  CX
	JEQ   adone
	ASTOREF(Y4, Y5)
	DECQ  CX
	JEQ   adone
	ASTOREF(Y6, Y7)
	JMP   adone

aint:
	ASTOREI(Y0, Y1)
	DECQ CX
	JEQ  adone
	ASTOREI(Y2, Y3)
	DECQ CX
	JEQ  adone
	ASTOREI(Y4, Y5)
	DECQ CX
	JEQ  adone
	ASTOREI(Y6, Y7)

adone:
	VZEROUPPER
	RET

// func qTileAVX2Split(k4 int, a *uint8, lda, m int, b *int8, pstride, kstride int, c unsafe.Pointer, ldc int, corr *int32, scale, bias *float32)
// One row (m is 1): Y2 holds the low 7 bits of the broadcast activations,
// Y3 their top bits (0 or 1); Y10 int16 ones, Y6 int16 128s, Y4 bytes
// 0x80, Y5 bytes 0x01.
TEXT ·qTileAVX2Split(SB), NOSPLIT, $0-96
	QSETUP
	VPXOR    Y0, Y0, Y0
	VPXOR    Y1, Y1, Y1
	VPCMPEQW Y10, Y10, Y10
	VPSRLW   $15, Y10, Y10
	VPSLLW   $7, Y10, Y6
	VPCMPEQB Y5, Y5, Y5
	VPABSB   Y5, Y5
	VPSLLW   $7, Y5, Y4

sloop:
	ALOADB
	VPBROADCASTD (SI), Y11
	VPANDN       Y11, Y4, Y2
	VPSRLW       $7, Y11, Y3
	VPAND        Y5, Y3, Y3
	VPMADDUBSW   Y8, Y2, Y12
	VPMADDUBSW   Y9, Y2, Y13
	VPMADDWD     Y10, Y12, Y12
	VPMADDWD     Y10, Y13, Y13
	VPADDD       Y12, Y0, Y0
	VPADDD       Y13, Y1, Y1
	VPMADDUBSW   Y8, Y3, Y12
	VPMADDUBSW   Y9, Y3, Y13
	VPMADDWD     Y6, Y12, Y12
	VPMADDWD     Y6, Y13, Y13
	VPADDD       Y12, Y0, Y0
	VPADDD       Y13, Y1, Y1
	VNEXT
	JNZ          sloop
	QSTORESETUP
	TESTQ        R13, R13
	JEQ          sint
	ASTOREF(Y0, Y1)
	JMP          sdone

sint:
	ASTOREI(Y0, Y1)

sdone:
	VZEROUPPER
	RET
