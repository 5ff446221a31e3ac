// AVX-512 micro-kernel of the packed float32 GEMM (see sgemm.go): the
// 6×16 kernel of sgemm_amd64.s widened to 6×32, two adjacent column panels
// of B at once, each row of the C tile in two ZMM registers. Every element
// of C gets the same FMAs in the same order as with the 6×16 kernel, so the
// results are the same bit for bit. Needs AVX-512 F.

#include "textflag.h"
#include "sgemm_amd64.h"

// The tile is in Z0..Z11 (row i in Z(2i), Z(2i+1)); Z12:Z13 hold 16 values
// of each B panel, Z14/Z15 a broadcast value of A. AX walks the packed A
// panel (6 values per k), BX and R14 the two B panels (DX bytes per k).

#define ZSTEP6(off) \
	VMOVUPS      (BX), Z12;         \
	VMOVUPS      (R14), Z13;        \
	VBROADCASTSS (off+0)(AX), Z14;  \
	VFMADD231PS  Z12, Z14, Z0;      \
	VFMADD231PS  Z13, Z14, Z1;      \
	VBROADCASTSS (off+4)(AX), Z15;  \
	VFMADD231PS  Z12, Z15, Z2;      \
	VFMADD231PS  Z13, Z15, Z3;      \
	VBROADCASTSS (off+8)(AX), Z14;  \
	VFMADD231PS  Z12, Z14, Z4;      \
	VFMADD231PS  Z13, Z14, Z5;      \
	VBROADCASTSS (off+12)(AX), Z15; \
	VFMADD231PS  Z12, Z15, Z6;      \
	VFMADD231PS  Z13, Z15, Z7;      \
	VBROADCASTSS (off+16)(AX), Z14; \
	VFMADD231PS  Z12, Z14, Z8;      \
	VFMADD231PS  Z13, Z14, Z9;      \
	VBROADCASTSS (off+20)(AX), Z15; \
	VFMADD231PS  Z12, Z15, Z10;     \
	VFMADD231PS  Z13, Z15, Z11;     \
	ADDQ         DX, BX;            \
	ADDQ         DX, R14

#define ZSTEP4(off) \
	VMOVUPS      (BX), Z12;         \
	VMOVUPS      (R14), Z13;        \
	VBROADCASTSS (off+0)(AX), Z14;  \
	VFMADD231PS  Z12, Z14, Z0;      \
	VFMADD231PS  Z13, Z14, Z1;      \
	VBROADCASTSS (off+4)(AX), Z15;  \
	VFMADD231PS  Z12, Z15, Z2;      \
	VFMADD231PS  Z13, Z15, Z3;      \
	VBROADCASTSS (off+8)(AX), Z14;  \
	VFMADD231PS  Z12, Z14, Z4;      \
	VFMADD231PS  Z13, Z14, Z5;      \
	VBROADCASTSS (off+12)(AX), Z15; \
	VFMADD231PS  Z12, Z15, Z6;      \
	VFMADD231PS  Z13, Z15, Z7;      \
	ADDQ         DX, BX;            \
	ADDQ         DX, R14

#define ZSTEP2(off) \
	VMOVUPS      (BX), Z12;        \
	VMOVUPS      (R14), Z13;       \
	VBROADCASTSS (off+0)(AX), Z14; \
	VFMADD231PS  Z12, Z14, Z0;     \
	VFMADD231PS  Z13, Z14, Z1;     \
	VBROADCASTSS (off+4)(AX), Z15; \
	VFMADD231PS  Z12, Z15, Z2;     \
	VFMADD231PS  Z13, Z15, Z3;     \
	ADDQ         DX, BX;           \
	ADDQ         DX, R14

// func sgemmPanel2(k int, a *float32, m int, b1, b2 *float32, ldb int, c *float32, ldc int, accum int)
//
// Registers as in sgemmPanel, plus R14 (second B panel) and R15 (its
// start).
TEXT ·sgemmPanel2(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), R9
	MOVQ a+8(FP), AX
	MOVQ m+16(FP), R11
	MOVQ b1+24(FP), R10
	MOVQ b2+32(FP), R15
	MOVQ ldb+40(FP), DX
	SHLQ $2, DX
	MOVQ c+48(FP), R12
	MOVQ ldc+56(FP), SI
	SHLQ $2, SI
	MOVQ accum+64(FP), R13

	CMPQ R11, $6
	JLT  zpartial

zfull:
	ZSTART6
	MOVQ R10, BX
	MOVQ R15, R14
	MOVQ R9, CX

	// Prefetch the next pair of column panels: 128 bytes on when B is read
	// in place, 2·k rows on when it is packed (ldb = 16).
	MOVQ $128, R8
	CMPQ DX, $64
	JNE  zpfset
	MOVQ R9, R8
	SHLQ $7, R8

zpfset:
	CMPQ CX, $4
	JLT  ztail6

zloop6:
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 (R14)(R8*1)
	ZSTEP6(0)
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 (R14)(R8*1)
	ZSTEP6(24)
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 (R14)(R8*1)
	ZSTEP6(48)
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 (R14)(R8*1)
	ZSTEP6(72)
	ADDQ $96, AX
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  zloop6

ztail6:
	TESTQ CX, CX
	JEQ   zstore6

zloop6t:
	ZSTEP6(0)
	ADDQ $24, AX
	DECQ CX
	JNE  zloop6t

zstore6:
	MOVQ  R12, DI
	TESTQ R13, R13
	JEQ   zover6
	ZSTORE6ADD
	JMP   znext6

zover6:
	ZSTORE6

znext6:
	MOVQ DI, R12
	SUBQ $6, R11
	CMPQ R11, $6
	JGE  zfull

zpartial:
	TESTQ R11, R11
	JEQ   zdone
	MOVQ  R12, R8
	ZPREFETCHROW
	ZPREFETCHROW
	ZPREFETCHROW
	ZPREFETCHROW
	ZPREFETCHROW
	ZZERO12
	MOVQ  R10, BX
	MOVQ  R15, R14
	MOVQ  R9, CX
	CMPQ  R11, $4
	JGT   zp6
	CMPQ  R11, $2
	JGT   zp4

zp2:
	ZSTEP2(0)
	ADDQ $24, AX
	DECQ CX
	JNE  zp2
	JMP  zpstore

zp4:
	ZSTEP4(0)
	ADDQ $24, AX
	DECQ CX
	JNE  zp4
	JMP  zpstore

zp6:
	ZSTEP6(0)
	ADDQ $24, AX
	DECQ CX
	JNE  zp6

zpstore:
	MOVQ  R12, DI
	TESTQ R13, R13
	JEQ   zpover
	ZADDROW(Z0, Z1)
	ZSTOREROW(Z0, Z1)
	DECQ  R11
	JEQ   zdone
	ZADDROW(Z2, Z3)
	ZSTOREROW(Z2, Z3)
	DECQ  R11
	JEQ   zdone
	ZADDROW(Z4, Z5)
	ZSTOREROW(Z4, Z5)
	DECQ  R11
	JEQ   zdone
	ZADDROW(Z6, Z7)
	ZSTOREROW(Z6, Z7)
	DECQ  R11
	JEQ   zdone
	ZADDROW(Z8, Z9)
	ZSTOREROW(Z8, Z9)
	JMP   zdone

zpover:
	ZSTOREROW(Z0, Z1)
	DECQ R11
	JEQ  zdone
	ZSTOREROW(Z2, Z3)
	DECQ R11
	JEQ  zdone
	ZSTOREROW(Z4, Z5)
	DECQ R11
	JEQ  zdone
	ZSTOREROW(Z6, Z7)
	DECQ R11
	JEQ  zdone
	ZSTOREROW(Z8, Z9)

zdone:
	VZEROUPPER
	RET
