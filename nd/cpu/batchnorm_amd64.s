// AVX2/FMA kernels of the fused batch normalisation (batchnorm.go). Written
// by hand; Go declarations in batchnorm_amd64.go.

#include "textflag.h"

// func bnSumsF32(x, y *float32, n int) (sx, sxy float64)
// Σx and Σx·y in float64: 8 values per step in four accumulators, then one
// at a time.
TEXT ·bnSumsF32(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DX
	MOVQ   n+16(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sums8:
	CMPQ        CX, $8
	JLT         sumsfold
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   16(SI), Y5
	VCVTPS2PD   (DX), Y6
	VCVTPS2PD   16(DX), Y7
	VADDPD      Y4, Y0, Y0
	VADDPD      Y5, Y1, Y1
	VFMADD231PD Y6, Y4, Y2
	VFMADD231PD Y7, Y5, Y3
	ADDQ        $32, SI
	ADDQ        $32, DX
	SUBQ        $8, CX
	JMP         sums8

sumsfold:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VEXTRACTF128 $1, Y2, X3
	VADDPD       X3, X2, X2
	VHADDPD      X2, X2, X2

sumstail:
	TESTQ       CX, CX
	JEQ         sumsdone
	VMOVSS      (SI), X4
	VCVTSS2SD   X4, X4, X4
	VMOVSS      (DX), X6
	VCVTSS2SD   X6, X6, X6
	VADDSD      X4, X0, X0
	VFMADD231SD X6, X4, X2
	ADDQ        $4, SI
	ADDQ        $4, DX
	DECQ        CX
	JMP         sumstail

sumsdone:
	VMOVSD X0, sx+24(FP)
	VMOVSD X2, sxy+32(FP)
	VZEROUPPER
	RET

// func scaleShiftF32(d, x *float32, n int, s, t float32)
// d = x·s + t (fused multiply-add).
TEXT ·scaleShiftF32(SB), NOSPLIT, $0-32
	MOVQ         d+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Y14
	VBROADCASTSS t+28(FP), Y15

ss16:
	CMPQ        CX, $16
	JLT         ss8
	VMOVUPS     (SI), Y0
	VMOVUPS     32(SI), Y1
	VFMADD213PS Y15, Y14, Y0
	VFMADD213PS Y15, Y14, Y1
	VMOVUPS     Y0, (DI)
	VMOVUPS     Y1, 32(DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         ss16

ss8:
	CMPQ        CX, $8
	JLT         sstail
	VMOVUPS     (SI), Y0
	VFMADD213PS Y15, Y14, Y0
	VMOVUPS     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX

sstail:
	TESTQ       CX, CX
	JEQ         ssdone
	VMOVSS      (SI), X0
	VFMADD213SS X15, X14, X0
	VMOVSS      X0, (DI)
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         sstail

ssdone:
	VZEROUPPER
	RET

// func axpbycF32(d, gp, x *float32, n int, a, b, c float32)
// d = a·gp + (b·x + c), both with fused multiply-adds.
TEXT ·axpbycF32(SB), NOSPLIT, $0-44
	MOVQ         d+0(FP), DI
	MOVQ         gp+8(FP), DX
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	VBROADCASTSS a+32(FP), Y13
	VBROADCASTSS b+36(FP), Y14
	VBROADCASTSS c+40(FP), Y15

ax8:
	CMPQ        CX, $8
	JLT         axtail
	VMOVUPS     (SI), Y0
	VFMADD213PS Y15, Y14, Y0 // b·x + c
	VMOVUPS     (DX), Y1
	VFMADD231PS Y13, Y1, Y0  // + a·g
	VMOVUPS     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DX
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         ax8

axtail:
	TESTQ       CX, CX
	JEQ         axdone
	VMOVSS      (SI), X0
	VFMADD213SS X15, X14, X0
	VMOVSS      (DX), X1
	VFMADD231SS X13, X1, X0
	VMOVSS      X0, (DI)
	ADDQ        $4, SI
	ADDQ        $4, DX
	ADDQ        $4, DI
	DECQ        CX
	JMP         axtail

axdone:
	VZEROUPPER
	RET

// func fmaF32(d, x, s, t *float32, n int)
// d[i] = x[i]·s[i] + t[i] with one rounding (FMA): scaleShiftF32 with a
// scale and shift per element.
TEXT ·fmaF32(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ s+16(FP), AX
	MOVQ t+24(FP), BX
	MOVQ n+32(FP), CX

fm8:
	CMPQ        CX, $8
	JLT         fmtail
	VMOVUPS     (SI), Y0
	VMOVUPS     (AX), Y1
	VFMADD213PS (BX), Y1, Y0
	VMOVUPS     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, AX
	ADDQ        $32, BX
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         fm8

fmtail:
	TESTQ       CX, CX
	JEQ         fmdone
	VMOVSS      (SI), X0
	VMOVSS      (AX), X1
	VFMADD213SS (BX), X1, X0
	VMOVSS      X0, (DI)
	ADDQ        $4, SI
	ADDQ        $4, AX
	ADDQ        $4, BX
	ADDQ        $4, DI
	DECQ        CX
	JMP         fmtail

fmdone:
	VZEROUPPER
	RET
