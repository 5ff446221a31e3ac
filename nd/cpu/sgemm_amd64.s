// AVX2/FMA kernels of the packed float32 GEMM (see sgemm.go): the 6×16
// micro-kernel looped over a column panel (sgemmPanel), the packing
// routines (packB16, packB16T, packA6, packA6T) and the CPUID/XGETBV probes
// that select them. Written by hand; no generator. Go declarations are in
// sgemm_amd64.go.

#include "textflag.h"
#include "sgemm_amd64.h"

// The micro-kernel keeps a 6×16 tile of C in Y0..Y11 (row i in Y(2i) and
// Y(2i+1)); Y12:Y13 hold 16 values of B, Y14/Y15 a broadcast value of A.
// AX walks the packed A panel (6 values per k), BX the B panel (DX bytes
// per k).

// STEP6 does one k step for six rows of A at off(AX).
#define STEP6(off) \
	VMOVUPS      (BX), Y12;         \
	VMOVUPS      32(BX), Y13;       \
	VBROADCASTSS (off+0)(AX), Y14;  \
	VFMADD231PS  Y12, Y14, Y0;      \
	VFMADD231PS  Y13, Y14, Y1;      \
	VBROADCASTSS (off+4)(AX), Y15;  \
	VFMADD231PS  Y12, Y15, Y2;      \
	VFMADD231PS  Y13, Y15, Y3;      \
	VBROADCASTSS (off+8)(AX), Y14;  \
	VFMADD231PS  Y12, Y14, Y4;      \
	VFMADD231PS  Y13, Y14, Y5;      \
	VBROADCASTSS (off+12)(AX), Y15; \
	VFMADD231PS  Y12, Y15, Y6;      \
	VFMADD231PS  Y13, Y15, Y7;      \
	VBROADCASTSS (off+16)(AX), Y14; \
	VFMADD231PS  Y12, Y14, Y8;      \
	VFMADD231PS  Y13, Y14, Y9;      \
	VBROADCASTSS (off+20)(AX), Y15; \
	VFMADD231PS  Y12, Y15, Y10;     \
	VFMADD231PS  Y13, Y15, Y11;     \
	ADDQ         DX, BX

// STEP4 does one k step for the first four rows of the panel.
#define STEP4(off) \
	VMOVUPS      (BX), Y12;         \
	VMOVUPS      32(BX), Y13;       \
	VBROADCASTSS (off+0)(AX), Y14;  \
	VFMADD231PS  Y12, Y14, Y0;      \
	VFMADD231PS  Y13, Y14, Y1;      \
	VBROADCASTSS (off+4)(AX), Y15;  \
	VFMADD231PS  Y12, Y15, Y2;      \
	VFMADD231PS  Y13, Y15, Y3;      \
	VBROADCASTSS (off+8)(AX), Y14;  \
	VFMADD231PS  Y12, Y14, Y4;      \
	VFMADD231PS  Y13, Y14, Y5;      \
	VBROADCASTSS (off+12)(AX), Y15; \
	VFMADD231PS  Y12, Y15, Y6;      \
	VFMADD231PS  Y13, Y15, Y7;      \
	ADDQ         DX, BX

// STEP2 does one k step for the first two rows of the panel.
#define STEP2(off) \
	VMOVUPS      (BX), Y12;        \
	VMOVUPS      32(BX), Y13;      \
	VBROADCASTSS (off+0)(AX), Y14; \
	VFMADD231PS  Y12, Y14, Y0;     \
	VFMADD231PS  Y13, Y14, Y1;     \
	VBROADCASTSS (off+4)(AX), Y15; \
	VFMADD231PS  Y12, Y15, Y2;     \
	VFMADD231PS  Y13, Y15, Y3;     \
	ADDQ         DX, BX

// func sgemmPanel(k int, a *float32, m int, b *float32, ldb int, c *float32, ldc int, accum int)
//
// Registers: AX a, BX b, CX k counter, DX ldb bytes, SI ldc bytes,
// DI C row, R8 prefetch address (C rows, then the offset of the next B
// panel), R9 k, R10 start of B, R11 rows left, R12 C panel, R13 accum.
TEXT ·sgemmPanel(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), R9
	MOVQ a+8(FP), AX
	MOVQ m+16(FP), R11
	MOVQ b+24(FP), R10
	MOVQ ldb+32(FP), DX
	SHLQ $2, DX
	MOVQ c+40(FP), R12
	MOVQ ldc+48(FP), SI
	SHLQ $2, SI
	MOVQ accum+56(FP), R13

	CMPQ R11, $6
	JLT  partial

full:
	START6
	MOVQ R10, BX
	MOVQ R9, CX

	// While computing, prefetch the next column panel of B into L1: it
	// starts 64 bytes on when B is read in place (ldb ≠ 16), k rows on
	// when it is packed (ldb = 16). Prefetches past the end of B are
	// harmless: they never fault.
	MOVQ $64, R8
	CMPQ DX, $64
	JNE  pfset
	MOVQ R9, R8
	SHLQ $6, R8

pfset:
	CMPQ CX, $4
	JLT  tail6

loop6:
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 60(BX)(R8*1)
	STEP6(0)
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 60(BX)(R8*1)
	STEP6(24)
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 60(BX)(R8*1)
	STEP6(48)
	PREFETCHT0 (BX)(R8*1)
	PREFETCHT0 60(BX)(R8*1)
	STEP6(72)
	ADDQ $96, AX
	SUBQ $4, CX
	CMPQ CX, $4
	JGE  loop6

tail6:
	TESTQ CX, CX
	JEQ   store6

loop6t:
	STEP6(0)
	ADDQ $24, AX
	DECQ CX
	JNE  loop6t

store6:
	MOVQ  R12, DI
	TESTQ R13, R13
	JEQ   over6
	STORE6ADD
	JMP   next6

over6:
	STORE6

next6:
	MOVQ DI, R12
	SUBQ $6, R11
	CMPQ R11, $6
	JGE  full

partial:
	// 0 to 5 rows are left; AX is at their packed panel.
	TESTQ R11, R11
	JEQ   done
	MOVQ  R12, R8
	PREFETCHROW
	PREFETCHROW
	PREFETCHROW
	PREFETCHROW
	PREFETCHROW
	ZERO12
	MOVQ  R10, BX
	MOVQ  R9, CX
	CMPQ  R11, $4
	JGT   p6
	CMPQ  R11, $2
	JGT   p4

p2:
	STEP2(0)
	ADDQ $24, AX
	DECQ CX
	JNE  p2
	JMP  pstore

p4:
	STEP4(0)
	ADDQ $24, AX
	DECQ CX
	JNE  p4
	JMP  pstore

p6:
	STEP6(0)
	ADDQ $24, AX
	DECQ CX
	JNE  p6

pstore:
	// Write exactly R11 rows.
	MOVQ  R12, DI
	TESTQ R13, R13
	JEQ   pover
	ADDROW(Y0, Y1)
	STOREROW(Y0, Y1)
	DECQ  R11
	JEQ   done
	ADDROW(Y2, Y3)
	STOREROW(Y2, Y3)
	DECQ  R11
	JEQ   done
	ADDROW(Y4, Y5)
	STOREROW(Y4, Y5)
	DECQ  R11
	JEQ   done
	ADDROW(Y6, Y7)
	STOREROW(Y6, Y7)
	DECQ  R11
	JEQ   done
	ADDROW(Y8, Y9)
	STOREROW(Y8, Y9)
	JMP   done

pover:
	STOREROW(Y0, Y1)
	DECQ R11
	JEQ  done
	STOREROW(Y2, Y3)
	DECQ R11
	JEQ  done
	STOREROW(Y4, Y5)
	DECQ R11
	JEQ  done
	STOREROW(Y6, Y7)
	DECQ R11
	JEQ  done
	STOREROW(Y8, Y9)

done:
	VZEROUPPER
	RET

// func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL subleaf+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax, edx uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-8
	MOVL   $0, CX
	XGETBV
	MOVL   AX, eax+0(FP)
	MOVL   DX, edx+4(FP)
	RET

// func packB16(k int, src *float32, ld int, dst *float32)
// Copies k rows of 16 values, ld elements apart, into dst (16 per row).
TEXT ·packB16(SB), NOSPLIT, $0-32
	MOVQ  k+0(FP), CX
	MOVQ  src+8(FP), SI
	MOVQ  ld+16(FP), DX
	SHLQ  $2, DX
	MOVQ  dst+24(FP), DI
	TESTQ CX, CX
	JEQ   pb16done

pb16loop:
	PREFETCHT0 (SI)(DX*8) // 8 rows ahead
	PREFETCHT0 60(SI)(DX*8)
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    DX, SI
	ADDQ    $64, DI
	DECQ    CX
	JNE     pb16loop

pb16done:
	VZEROUPPER
	RET

// TRANSPOSE8 transposes the 8x8 block held in Y0..Y7 (rows) into
// Y8..Y15 (columns), using Y0..Y7 as scratch.
#define TRANSPOSE8 \
	VUNPCKLPS  Y1, Y0, Y8;          \
	VUNPCKHPS  Y1, Y0, Y9;          \
	VUNPCKLPS  Y3, Y2, Y10;         \
	VUNPCKHPS  Y3, Y2, Y11;         \
	VUNPCKLPS  Y5, Y4, Y12;         \
	VUNPCKHPS  Y5, Y4, Y13;         \
	VUNPCKLPS  Y7, Y6, Y14;         \
	VUNPCKHPS  Y7, Y6, Y15;         \
	VSHUFPS    $0x44, Y10, Y8, Y0;  \
	VSHUFPS    $0xEE, Y10, Y8, Y1;  \
	VSHUFPS    $0x44, Y11, Y9, Y2;  \
	VSHUFPS    $0xEE, Y11, Y9, Y3;  \
	VSHUFPS    $0x44, Y14, Y12, Y4; \
	VSHUFPS    $0xEE, Y14, Y12, Y5; \
	VSHUFPS    $0x44, Y15, Y13, Y6; \
	VSHUFPS    $0xEE, Y15, Y13, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8;   \
	VPERM2F128 $0x20, Y5, Y1, Y9;   \
	VPERM2F128 $0x20, Y6, Y2, Y10;  \
	VPERM2F128 $0x20, Y7, Y3, Y11;  \
	VPERM2F128 $0x31, Y4, Y0, Y12;  \
	VPERM2F128 $0x31, Y5, Y1, Y13;  \
	VPERM2F128 $0x31, Y6, Y2, Y14;  \
	VPERM2F128 $0x31, Y7, Y3, Y15

// LOAD8 loads 8 values at byte offset BX from each of the 8 rows whose
// pointers are at off(R8) .. off+56(R8) into Y0..Y7, and prefetches each
// row 256 bytes ahead.
#define LOAD8(off) \
	MOVQ       (off+0)(R8), R10;     \
	VMOVUPS    (R10)(BX*1), Y0;      \
	PREFETCHT0 256(R10)(BX*1);       \
	MOVQ       (off+8)(R8), R10;     \
	VMOVUPS    (R10)(BX*1), Y1;      \
	PREFETCHT0 256(R10)(BX*1);       \
	MOVQ       (off+16)(R8), R10;    \
	VMOVUPS    (R10)(BX*1), Y2;      \
	PREFETCHT0 256(R10)(BX*1);       \
	MOVQ       (off+24)(R8), R10;    \
	VMOVUPS    (R10)(BX*1), Y3;      \
	PREFETCHT0 256(R10)(BX*1);       \
	MOVQ       (off+32)(R8), R10;    \
	VMOVUPS    (R10)(BX*1), Y4;      \
	PREFETCHT0 256(R10)(BX*1);       \
	MOVQ       (off+40)(R8), R10;    \
	VMOVUPS    (R10)(BX*1), Y5;      \
	PREFETCHT0 256(R10)(BX*1);       \
	MOVQ       (off+48)(R8), R10;    \
	VMOVUPS    (R10)(BX*1), Y6;      \
	PREFETCHT0 256(R10)(BX*1);       \
	MOVQ       (off+56)(R8), R10;    \
	VMOVUPS    (R10)(BX*1), Y7;      \
	PREFETCHT0 256(R10)(BX*1)

// func packB16T(k int, rows *[16]*float32, dst *float32)
TEXT ·packB16T(SB), NOSPLIT, $0-24
	MOVQ  k+0(FP), CX
	MOVQ  rows+8(FP), R8
	MOVQ  dst+16(FP), DI
	XORQ  BX, BX
	SHRQ  $3, CX
	TESTQ CX, CX
	JEQ   pbtdone

pbtloop:
	LOAD8(0)
	TRANSPOSE8
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, 64(DI)
	VMOVUPS Y10, 128(DI)
	VMOVUPS Y11, 192(DI)
	VMOVUPS Y12, 256(DI)
	VMOVUPS Y13, 320(DI)
	VMOVUPS Y14, 384(DI)
	VMOVUPS Y15, 448(DI)
	LOAD8(64)
	TRANSPOSE8
	VMOVUPS Y8, 32(DI)
	VMOVUPS Y9, 96(DI)
	VMOVUPS Y10, 160(DI)
	VMOVUPS Y11, 224(DI)
	VMOVUPS Y12, 288(DI)
	VMOVUPS Y13, 352(DI)
	VMOVUPS Y14, 416(DI)
	VMOVUPS Y15, 480(DI)
	ADDQ    $32, BX
	ADDQ    $512, DI
	DECQ    CX
	JNE     pbtloop

pbtdone:
	VZEROUPPER
	RET

// func packA6(k int, rows *[8]*float32, alpha float32, dst *float32)
TEXT ·packA6(SB), NOSPLIT, $0-32
	MOVQ         k+0(FP), CX
	MOVQ         rows+8(FP), R8
	MOVQ         dst+24(FP), DI
	XORQ         BX, BX
	SHRQ         $3, CX
	TESTQ        CX, CX
	JEQ          pa6done

pa6loop:
	LOAD8(0)
	TRANSPOSE8
	VBROADCASTSS alpha+16(FP), Y0
	VMULPS       Y0, Y8, Y8
	VMULPS       Y0, Y9, Y9
	VMULPS       Y0, Y10, Y10
	VMULPS       Y0, Y11, Y11
	VMULPS       Y0, Y12, Y12
	VMULPS       Y0, Y13, Y13
	VMULPS       Y0, Y14, Y14
	VMULPS       Y0, Y15, Y15
	VMOVUPS      Y8, (DI)
	VMOVUPS      Y9, 24(DI)
	VMOVUPS      Y10, 48(DI)
	VMOVUPS      Y11, 72(DI)
	VMOVUPS      Y12, 96(DI)
	VMOVUPS      Y13, 120(DI)
	VMOVUPS      Y14, 144(DI)
	VMOVUPS      Y15, 168(DI)
	ADDQ         $32, BX
	ADDQ         $192, DI
	DECQ         CX
	JNE          pa6loop

pa6done:
	VZEROUPPER
	RET

// func packA6T(k int, src *float32, ld int, alpha float32, dst *float32)
TEXT ·packA6T(SB), NOSPLIT, $0-40
	MOVQ         k+0(FP), CX
	MOVQ         src+8(FP), SI
	MOVQ         ld+16(FP), DX
	SHLQ         $2, DX
	VBROADCASTSS alpha+24(FP), X2
	MOVQ         dst+32(FP), DI
	TESTQ        CX, CX
	JEQ          pa6tdone

pa6tloop:
	VMOVUPS (SI), X0
	VMOVSD  16(SI), X1
	VMULPS  X2, X0, X0
	VMULPS  X2, X1, X1
	VMOVUPS X0, (DI)
	VMOVSD  X1, 16(DI)
	ADDQ    DX, SI
	ADDQ    $24, DI
	DECQ    CX
	JNE     pa6tloop

pa6tdone:
	RET
