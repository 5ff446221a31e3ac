// Micro-kernel of the bfloat16 GEMM (see sbgemm.go): a 6×32 tile of
// float32 sums in Z0–Z11 (row r in Z2r, Z2r+1), per k pair two ZMM loads
// of B's panel (Z12, Z13), each row's A word broadcast (Z14, Z15 in turn)
// and twelve VDPBF16PS. The Go assembler has no VDPBF16PS, so the
// instructions are spelled out as bytes (EVEX.512.F3.0F38.W0 52 /r,
// assembled by GNU as): DPr_h is "vdpbf16ps Z(12+h), Z(14 or 15), Z(2r+h)".
// Needs AVX-512 F and AVX512_BF16.

#include "textflag.h"

#define DP0_0 BYTE $0x62; BYTE $0xd2; BYTE $0x0e; BYTE $0x48; BYTE $0x52; BYTE $0xc4
#define DP0_1 BYTE $0x62; BYTE $0xd2; BYTE $0x0e; BYTE $0x48; BYTE $0x52; BYTE $0xcd
#define DP1_0 BYTE $0x62; BYTE $0xd2; BYTE $0x06; BYTE $0x48; BYTE $0x52; BYTE $0xd4
#define DP1_1 BYTE $0x62; BYTE $0xd2; BYTE $0x06; BYTE $0x48; BYTE $0x52; BYTE $0xdd
#define DP2_0 BYTE $0x62; BYTE $0xd2; BYTE $0x0e; BYTE $0x48; BYTE $0x52; BYTE $0xe4
#define DP2_1 BYTE $0x62; BYTE $0xd2; BYTE $0x0e; BYTE $0x48; BYTE $0x52; BYTE $0xed
#define DP3_0 BYTE $0x62; BYTE $0xd2; BYTE $0x06; BYTE $0x48; BYTE $0x52; BYTE $0xf4
#define DP3_1 BYTE $0x62; BYTE $0xd2; BYTE $0x06; BYTE $0x48; BYTE $0x52; BYTE $0xfd
#define DP4_0 BYTE $0x62; BYTE $0x52; BYTE $0x0e; BYTE $0x48; BYTE $0x52; BYTE $0xc4
#define DP4_1 BYTE $0x62; BYTE $0x52; BYTE $0x0e; BYTE $0x48; BYTE $0x52; BYTE $0xcd
#define DP5_0 BYTE $0x62; BYTE $0x52; BYTE $0x06; BYTE $0x48; BYTE $0x52; BYTE $0xd4
#define DP5_1 BYTE $0x62; BYTE $0x52; BYTE $0x06; BYTE $0x48; BYTE $0x52; BYTE $0xdd

// STEP is one k pair: B's words at DX, A's at SI.
#define STEP \
	VMOVUPS      (DX), Z12 \
	VMOVUPS      64(DX), Z13 \
	VPBROADCASTD (SI), Z14 \
	DP0_0 \
	DP0_1 \
	VPBROADCASTD 4(SI), Z15 \
	DP1_0 \
	DP1_1 \
	VPBROADCASTD 8(SI), Z14 \
	DP2_0 \
	DP2_1 \
	VPBROADCASTD 12(SI), Z15 \
	DP3_0 \
	DP3_1 \
	VPBROADCASTD 16(SI), Z14 \
	DP4_0 \
	DP4_1 \
	VPBROADCASTD 20(SI), Z15 \
	DP5_0 \
	DP5_1

// func sbTile6x32(kp int, a, b *uint32, w *float32, load int)
TEXT ·sbTile6x32(SB), NOSPLIT, $0-40
	MOVQ kp+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ w+24(FP), DI
	MOVQ load+32(FP), AX
	TESTQ AX, AX
	JNZ  loadw
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
	JMP  pairs2

loadw:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	VMOVUPS 256(DI), Z4
	VMOVUPS 320(DI), Z5
	VMOVUPS 384(DI), Z6
	VMOVUPS 448(DI), Z7
	VMOVUPS 512(DI), Z8
	VMOVUPS 576(DI), Z9
	VMOVUPS 640(DI), Z10
	VMOVUPS 704(DI), Z11

pairs2:
	CMPQ CX, $2
	JLT  pair1
	STEP
	ADDQ $24, SI
	ADDQ $128, DX
	STEP
	ADDQ $24, SI
	ADDQ $128, DX
	SUBQ $2, CX
	JMP  pairs2

pair1:
	TESTQ CX, CX
	JZ    done
	STEP

done:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	VMOVUPS Z8, 512(DI)
	VMOVUPS Z9, 576(DI)
	VMOVUPS Z10, 640(DI)
	VMOVUPS Z11, 704(DI)
	VZEROUPPER
	RET

// CVT0 is "vcvtneps2bf16 Z0, Y2", CVT3 "vcvtneps2bf16 Z3, Y4" (round to
// nearest even; a denormal input counts as zero).
#define CVT0 BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xd0
#define CVT3 BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xe3

// func sbStoreRows(w *float32, c *backend.BF16, ldc, rows int, alpha, beta float32)
TEXT ·sbStoreRows(SB), NOSPLIT, $0-40
	MOVQ         w+0(FP), SI
	MOVQ         c+8(FP), DI
	MOVQ         ldc+16(FP), DX
	SHLQ         $1, DX
	MOVQ         rows+24(FP), CX
	VBROADCASTSS alpha+32(FP), Z5
	VBROADCASTSS beta+36(FP), Z6
	MOVL         beta+36(FP), AX
	TESTL        $0x7fffffff, AX
	JZ           nobeta

withbeta:
	TESTQ       CX, CX
	JZ          stored
	VMULPS      (SI), Z5, Z0
	VMULPS      64(SI), Z5, Z3
	VPMOVZXWD   (DI), Z1
	VPSLLD      $16, Z1, Z1
	VMULPS      Z6, Z1, Z1
	VADDPS      Z1, Z0, Z0
	VPMOVZXWD   32(DI), Z1
	VPSLLD      $16, Z1, Z1
	VMULPS      Z6, Z1, Z1
	VADDPS      Z1, Z3, Z3
	CVT0
	CVT3
	VMOVDQU     Y2, (DI)
	VMOVDQU     Y4, 32(DI)
	ADDQ        $128, SI
	ADDQ        DX, DI
	DECQ        CX
	JMP         withbeta

nobeta:
	TESTQ   CX, CX
	JZ      stored
	VMULPS  (SI), Z5, Z0
	VMULPS  64(SI), Z5, Z3
	CVT0
	CVT3
	VMOVDQU Y2, (DI)
	VMOVDQU Y4, 32(DI)
	ADDQ    $128, SI
	ADDQ    DX, DI
	DECQ    CX
	JMP     nobeta

stored:
	VZEROUPPER
	RET
