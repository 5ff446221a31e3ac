// AVX-512 (ZMM) versions of the batch-normalisation kernels of
// batchnorm_amd64.s (batchnorm.go): 16 values per vector, the last 1 to 15
// under a K-register mask (masked loads suppress faults on the lanes past
// n). scaleShiftF32x512 and axpbycF32x512 do the same fused multiply-adds
// as the AVX2 kernels, so their results are the same bit for bit;
// bnSumsF32x512 adds in another order. Uses AVX-512 F, and VL for the
// masked YMM loads of bnSumsF32x512. Written by hand; Go declarations in
// kernels512_amd64.go.

#include "textflag.h"

// TAILMASK sets K1 to the low n bits (n in CX, 0 ≤ n < 16), using AX.
#define TAILMASK \
	MOVL  $1, AX;  \
	SHLL  CX, AX;  \
	DECL  AX;      \
	KMOVW AX, K1

// func bnSumsF32x512(x, y *float32, n int) (sx, sxy float64)
// Σx and Σx·y in float64: 16 values per step in four 8-lane accumulators,
// then 8, then the last 1 to 7 under a mask (zeros, which add nothing).
// The order differs from bnSumsF32's, so the two agree to within the
// rounding of float64 sums: |error| ≤ (n+16)·2⁻⁵³·Σ|term|
// (kernels512_test.go).
TEXT ·bnSumsF32x512(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DX
	MOVQ   n+16(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3

sums16:
	CMPQ        CX, $16
	JLT         sums8
	VCVTPS2PD   (SI), Z4
	VCVTPS2PD   32(SI), Z5
	VCVTPS2PD   (DX), Z6
	VCVTPS2PD   32(DX), Z7
	VADDPD      Z4, Z0, Z0
	VADDPD      Z5, Z1, Z1
	VFMADD231PD Z6, Z4, Z2
	VFMADD231PD Z7, Z5, Z3
	ADDQ        $64, SI
	ADDQ        $64, DX
	SUBQ        $16, CX
	JMP         sums16

sums8:
	CMPQ        CX, $8
	JLT         sumstail
	VCVTPS2PD   (SI), Z4
	VCVTPS2PD   (DX), Z6
	VADDPD      Z4, Z0, Z0
	VFMADD231PD Z6, Z4, Z2
	ADDQ        $32, SI
	ADDQ        $32, DX
	SUBQ        $8, CX

sumstail:
	TESTQ       CX, CX
	JEQ         sumsfold
	TAILMASK
	VMOVUPS.Z   (SI), K1, Y4
	VMOVUPS.Z   (DX), K1, Y6
	VCVTPS2PD   Y4, Z4
	VCVTPS2PD   Y6, Z6
	VADDPD      Z4, Z1, Z1
	VFMADD231PD Z6, Z4, Z3

sumsfold:
	VADDPD        Z1, Z0, Z0
	VADDPD        Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VHADDPD       X0, X0, X0
	VEXTRACTF64X4 $1, Z2, Y3
	VADDPD        Y3, Y2, Y2
	VEXTRACTF128  $1, Y2, X3
	VADDPD        X3, X2, X2
	VHADDPD       X2, X2, X2
	VMOVSD        X0, sx+24(FP)
	VMOVSD        X2, sxy+32(FP)
	VZEROUPPER
	RET

// func scaleShiftF32x512(d, x *float32, n int, s, t float32)
// d = x·s + t (fused multiply-add).
TEXT ·scaleShiftF32x512(SB), NOSPLIT, $0-32
	MOVQ         d+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Z14
	VBROADCASTSS t+28(FP), Z15

ss32:
	CMPQ        CX, $32
	JLT         ss16
	VMOVUPS     (SI), Z0
	VMOVUPS     64(SI), Z1
	VFMADD213PS Z15, Z14, Z0
	VFMADD213PS Z15, Z14, Z1
	VMOVUPS     Z0, (DI)
	VMOVUPS     Z1, 64(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         ss32

ss16:
	CMPQ        CX, $16
	JLT         sstail
	VMOVUPS     (SI), Z0
	VFMADD213PS Z15, Z14, Z0
	VMOVUPS     Z0, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX

sstail:
	TESTQ       CX, CX
	JEQ         ssdone
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z0
	VFMADD213PS Z15, Z14, Z0
	VMOVUPS     Z0, K1, (DI)

ssdone:
	VZEROUPPER
	RET

// func axpbycF32x512(d, gp, x *float32, n int, a, b, c float32)
// d = a·gp + (b·x + c), both with fused multiply-adds.
TEXT ·axpbycF32x512(SB), NOSPLIT, $0-44
	MOVQ         d+0(FP), DI
	MOVQ         gp+8(FP), DX
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	VBROADCASTSS a+32(FP), Z13
	VBROADCASTSS b+36(FP), Z14
	VBROADCASTSS c+40(FP), Z15

ax32:
	CMPQ        CX, $32
	JLT         ax16
	VMOVUPS     (SI), Z0
	VMOVUPS     64(SI), Z2
	VFMADD213PS Z15, Z14, Z0 // b·x + c
	VFMADD213PS Z15, Z14, Z2
	VMOVUPS     (DX), Z1
	VMOVUPS     64(DX), Z3
	VFMADD231PS Z13, Z1, Z0  // + a·g
	VFMADD231PS Z13, Z3, Z2
	VMOVUPS     Z0, (DI)
	VMOVUPS     Z2, 64(DI)
	ADDQ        $128, SI
	ADDQ        $128, DX
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         ax32

ax16:
	CMPQ        CX, $16
	JLT         axtail
	VMOVUPS     (SI), Z0
	VFMADD213PS Z15, Z14, Z0
	VMOVUPS     (DX), Z1
	VFMADD231PS Z13, Z1, Z0
	VMOVUPS     Z0, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DX
	ADDQ        $64, DI
	SUBQ        $16, CX

axtail:
	TESTQ       CX, CX
	JEQ         axdone
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z0
	VFMADD213PS Z15, Z14, Z0
	VMOVUPS.Z   (DX), K1, Z1
	VFMADD231PS Z13, Z1, Z0
	VMOVUPS     Z0, K1, (DI)

axdone:
	VZEROUPPER
	RET

// func fmaF32x512(d, x, s, t *float32, n int)
// fmaF32 on ZMM registers, the last 1 to 15 values under a mask.
TEXT ·fmaF32x512(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ s+16(FP), DX
	MOVQ t+24(FP), BX
	MOVQ n+32(FP), CX

zfm16:
	CMPQ        CX, $16
	JLT         zfmtail
	VMOVUPS     (SI), Z0
	VMOVUPS     (DX), Z1
	VFMADD213PS (BX), Z1, Z0
	VMOVUPS     Z0, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DX
	ADDQ        $64, BX
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         zfm16

zfmtail:
	TESTQ       CX, CX
	JEQ         zfmdone
	TAILMASK
	VMOVUPS.Z   (SI), K1, Z0
	VMOVUPS.Z   (DX), K1, Z1
	VMOVUPS.Z   (BX), K1, Z2
	VFMADD213PS Z2, Z1, Z0
	VMOVUPS     Z0, K1, (DI)

zfmdone:
	VZEROUPPER
	RET
