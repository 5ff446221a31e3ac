// The dynamic quantization of activations on AVX2 (see qquant.go):
// their range, and their rounding to unsigned bytes.

#include "textflag.h"

// func qMinMaxAVX2(x *float32, n int) (lo, hi float32, nan bool)
// Y0 the running minimum, Y1 the maximum, Y2 a lane mask of NaNs seen.
TEXT ·qMinMaxAVX2(SB), NOSPLIT, $0-25
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y1
	VXORPS  Y2, Y2, Y2

mmloop:
	VMOVUPS (SI), Y3
	VMINPS  Y3, Y0, Y0
	VMAXPS  Y3, Y1, Y1
	VCMPPS  $3, Y3, Y3, Y4
	VORPS   Y4, Y2, Y2
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNE     mmloop
	VEXTRACTF128 $1, Y0, X3
	VMINPS       X3, X0, X0
	VPERMILPS    $0x4e, X0, X3
	VMINPS       X3, X0, X0
	VPERMILPS    $0xb1, X0, X3
	VMINPS       X3, X0, X0
	MOVSS        X0, lo+16(FP)
	VEXTRACTF128 $1, Y1, X3
	VMAXPS       X3, X1, X1
	VPERMILPS    $0x4e, X1, X3
	VMAXPS       X3, X1, X1
	VPERMILPS    $0xb1, X1, X3
	VMAXPS       X3, X1, X1
	MOVSS        X1, hi+20(FP)
	VMOVMSKPS    Y2, AX
	TESTL        AX, AX
	SETNE        nan+24(FP)
	VZEROUPPER
	RET

// The dword order that undoes the lane interleaving of the packs.
DATA qPackOrder<>+0(SB)/4, $0
DATA qPackOrder<>+4(SB)/4, $4
DATA qPackOrder<>+8(SB)/4, $1
DATA qPackOrder<>+12(SB)/4, $5
DATA qPackOrder<>+16(SB)/4, $2
DATA qPackOrder<>+20(SB)/4, $6
DATA qPackOrder<>+24(SB)/4, $3
DATA qPackOrder<>+28(SB)/4, $7
GLOBL qPackOrder<>(SB), RODATA|NOPTR, $32

#define QCONV(off, y) \
	VMULPS    off(SI), Y15, y; \
	VMAXPS    Y13, y, y;       \
	VMINPS    Y12, y, y;       \
	VCVTPS2DQ y, y;            \
	VPADDD    Y14, y, y

// func qQuantizeAVX2(dst *uint8, src *float32, n int, inv float32, zero int32)
// 32 values a step: product with inv (Y15), clamped to [-256, 512]
// (Y13, Y12; a NaN becomes -256), rounded to even, plus the zero point
// (Y14), packed with saturation to [0, 255].
TEXT ·qQuantizeAVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS inv+24(FP), Y15
	MOVL         zero+28(FP), AX
	MOVL         AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0xc3800000, AX
	MOVL         AX, X13
	VPBROADCASTD X13, Y13
	MOVL         $0x44000000, AX
	MOVL         AX, X12
	VPBROADCASTD X12, Y12
	VMOVDQU      qPackOrder<>(SB), Y9

qloop:
	QCONV(0, Y0)
	QCONV(32, Y1)
	QCONV(64, Y2)
	QCONV(96, Y3)
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMD    Y0, Y9, Y0
	VMOVDQU   Y0, (DI)
	ADDQ      $128, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNE       qloop
	VZEROUPPER
	RET
