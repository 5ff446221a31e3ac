#include "textflag.h"

// Half-precision conversions, 8 values per iteration on YMM registers.
// n is a positive multiple of 8; the Go callers handle the tail.

// func f16ToF32AVX(dst *float32, src *uint16, n int)
// F16C's VCVTPH2PS: exact.
TEXT ·f16ToF32AVX(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET

// func f32ToF16AVX(dst *uint16, src *float32, n int)
// F16C's VCVTPS2PH with immediate rounding 0: to nearest even; NaNs are
// quieted keeping their top payload bits, as backend.F16From does.
TEXT ·f32ToF16AVX(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVDQU   X1, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET

// func bf16ToF32AVX(dst *float32, src *uint16, n int)
// Zero-extend each 16-bit value and shift it into the top half.
TEXT ·bf16ToF32AVX(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VPMOVZXWD (SI), Y0
	VPSLLD    $16, Y0, Y0
	VMOVDQU   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET

DATA bfconst<>+0(SB)/4, $0x00007fff // rounding bias
DATA bfconst<>+4(SB)/4, $0x00000001 // the kept part's lowest bit
DATA bfconst<>+8(SB)/4, $0x7fffffff // magnitude mask
DATA bfconst<>+12(SB)/4, $0x7f800000 // +Inf: a larger magnitude is NaN
DATA bfconst<>+16(SB)/4, $0x00000040 // a NaN's quiet bit, after the shift
GLOBL bfconst<>(SB), RODATA|NOPTR, $20

// func f32ToBF16AVX(dst *uint16, src *float32, n int)
// Round to nearest even: (b + 0x7fff + ((b >> 16) & 1)) >> 16; a NaN
// becomes b >> 16 with the quiet bit set, as backend.BF16From does.
TEXT ·f32ToBF16AVX(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VPBROADCASTD bfconst<>+0(SB), Y10
	VPBROADCASTD bfconst<>+4(SB), Y11
	VPBROADCASTD bfconst<>+8(SB), Y12
	VPBROADCASTD bfconst<>+12(SB), Y13
	VPBROADCASTD bfconst<>+16(SB), Y14
loop:
	VMOVDQU   (SI), Y0
	VPSRLD    $16, Y0, Y1    // b >> 16
	VPAND     Y11, Y1, Y2    // its lowest bit
	VPADDD    Y10, Y0, Y3
	VPADDD    Y2, Y3, Y3
	VPSRLD    $16, Y3, Y3    // rounded
	VPAND     Y12, Y0, Y4
	VPCMPGTD  Y13, Y4, Y4    // |b| > Inf: NaN
	VPOR      Y14, Y1, Y5    // quiet NaN
	VPBLENDVB Y4, Y5, Y3, Y3
	VPACKUSDW Y3, Y3, Y3     // words, per 128-bit lane: q0 q0 q1 q1
	VPERMQ    $0x08, Y3, Y3  // q0 (lane 0), q1 (lane 1) to the low half
	VMOVDQU   X3, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET
