// Micro-kernel of the bfloat16 GEMM (see sbgemm.go): a 12×32 tile of
// float32 sums, per k pair two ZMM loads of B's panel, each row's A word
// broadcast and 24 VDPBF16PS; the store of a panel's sums; the packing of
// row pairs. The Go assembler has no VDPBF16PS, so the instructions are
// spelled out as bytes (EVEX.512.F3.0F38.W0 52 /r, assembled by GNU as).
// Needs AVX-512 F and AVX512_BF16.

#include "textflag.h"

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

// The 12×32 tile (sbTile12x32): rows r in Z2r, Z2r+1 (Z0–Z23), B's words
// in Z24, Z25, A's broadcast into Z26 and Z27 in turn. Er_h is "vdpbf16ps
// Z(24+h), Z(26 + r mod 2), Z(2r+h)" (assembled by GNU as). 24
// accumulators keep both VDPBF16PS pipes busy through the instruction's
// latency, which twelve did not (BenchmarkSBGemm).
#define E0_0 BYTE $0x62; BYTE $0x92; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xc0
#define E0_1 BYTE $0x62; BYTE $0x92; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xc9
#define E1_0 BYTE $0x62; BYTE $0x92; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xd0
#define E1_1 BYTE $0x62; BYTE $0x92; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xd9
#define E2_0 BYTE $0x62; BYTE $0x92; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xe0
#define E2_1 BYTE $0x62; BYTE $0x92; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xe9
#define E3_0 BYTE $0x62; BYTE $0x92; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xf0
#define E3_1 BYTE $0x62; BYTE $0x92; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xf9
#define E4_0 BYTE $0x62; BYTE $0x12; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xc0
#define E4_1 BYTE $0x62; BYTE $0x12; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xc9
#define E5_0 BYTE $0x62; BYTE $0x12; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xd0
#define E5_1 BYTE $0x62; BYTE $0x12; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xd9
#define E6_0 BYTE $0x62; BYTE $0x12; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xe0
#define E6_1 BYTE $0x62; BYTE $0x12; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xe9
#define E7_0 BYTE $0x62; BYTE $0x12; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xf0
#define E7_1 BYTE $0x62; BYTE $0x12; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xf9
#define E8_0 BYTE $0x62; BYTE $0x82; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xc0
#define E8_1 BYTE $0x62; BYTE $0x82; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xc9
#define E9_0 BYTE $0x62; BYTE $0x82; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xd0
#define E9_1 BYTE $0x62; BYTE $0x82; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xd9
#define E10_0 BYTE $0x62; BYTE $0x82; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xe0
#define E10_1 BYTE $0x62; BYTE $0x82; BYTE $0x2e; BYTE $0x40; BYTE $0x52; BYTE $0xe9
#define E11_0 BYTE $0x62; BYTE $0x82; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xf0
#define E11_1 BYTE $0x62; BYTE $0x82; BYTE $0x26; BYTE $0x40; BYTE $0x52; BYTE $0xf9

// STEP12 is one k pair of the 12×32 tile: B's words at DX, A's at SI.
#define STEP12 \
	VMOVUPS      (DX), Z24 \
	VMOVUPS      64(DX), Z25 \
	VPBROADCASTD 0(SI), Z26 \
	E0_0 \
	E0_1 \
	VPBROADCASTD 4(SI), Z27 \
	E1_0 \
	E1_1 \
	VPBROADCASTD 8(SI), Z26 \
	E2_0 \
	E2_1 \
	VPBROADCASTD 12(SI), Z27 \
	E3_0 \
	E3_1 \
	VPBROADCASTD 16(SI), Z26 \
	E4_0 \
	E4_1 \
	VPBROADCASTD 20(SI), Z27 \
	E5_0 \
	E5_1 \
	VPBROADCASTD 24(SI), Z26 \
	E6_0 \
	E6_1 \
	VPBROADCASTD 28(SI), Z27 \
	E7_0 \
	E7_1 \
	VPBROADCASTD 32(SI), Z26 \
	E8_0 \
	E8_1 \
	VPBROADCASTD 36(SI), Z27 \
	E9_0 \
	E9_1 \
	VPBROADCASTD 40(SI), Z26 \
	E10_0 \
	E10_1 \
	VPBROADCASTD 44(SI), Z27 \
	E11_0 \
	E11_1

// func sbTile12x32(kp int, a, b *uint32, w *float32, load int)
TEXT ·sbTile12x32(SB), NOSPLIT, $0-40
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
	JMP  pairs

loadw:
	VMOVUPS 0(DI), Z0
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
	VMOVUPS 768(DI), Z12
	VMOVUPS 832(DI), Z13
	VMOVUPS 896(DI), Z14
	VMOVUPS 960(DI), Z15
	VMOVUPS 1024(DI), Z16
	VMOVUPS 1088(DI), Z17
	VMOVUPS 1152(DI), Z18
	VMOVUPS 1216(DI), Z19
	VMOVUPS 1280(DI), Z20
	VMOVUPS 1344(DI), Z21
	VMOVUPS 1408(DI), Z22
	VMOVUPS 1472(DI), Z23

pairs:
	TESTQ CX, CX
	JZ    done
	STEP12
	ADDQ $48, SI
	ADDQ $128, DX
	DECQ CX
	JMP  pairs

done:
	VMOVUPS Z0, 0(DI)
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
	VMOVUPS Z12, 768(DI)
	VMOVUPS Z13, 832(DI)
	VMOVUPS Z14, 896(DI)
	VMOVUPS Z15, 960(DI)
	VMOVUPS Z16, 1024(DI)
	VMOVUPS Z17, 1088(DI)
	VMOVUPS Z18, 1152(DI)
	VMOVUPS Z19, 1216(DI)
	VMOVUPS Z20, 1280(DI)
	VMOVUPS Z21, 1344(DI)
	VMOVUPS Z22, 1408(DI)
	VMOVUPS Z23, 1472(DI)
	VZEROUPPER
	RET

// func packPairsBF16x512(dst *uint32, lo, hi *backend.BF16, n int)
//
// dst[c] = lo[c] | hi[c]<<16 for c < n, n a multiple of 16.
TEXT ·packPairsBF16x512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ lo+8(FP), SI
	MOVQ hi+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   packed

pack16:
	VPMOVZXWD (SI), Z0
	VPMOVZXWD (DX), Z1
	VPSLLD    $16, Z1, Z1
	VPORD     Z1, Z0, Z0
	VMOVDQU32 Z0, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DX
	ADDQ      $64, DI
	DECQ      CX
	JNZ       pack16

packed:
	VZEROUPPER
	RET
