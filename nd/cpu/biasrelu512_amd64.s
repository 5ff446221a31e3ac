// AVX-512 (ZMM) versions of the fused bias + ReLU kernels of
// biasrelu_amd64.s (biasrelu.go): 16 values per vector, the last 1 to 15
// under a K-register mask (masked loads suppress faults on the lanes past
// n). Each element gets the same operations as in the AVX2 kernels, so
// addReluF32x512 and the d of reluGradSumF32x512 are theirs bit for bit;
// addReluScalarF32x512 is too except for one NaN payload (see there), and
// the sum of reluGradSumF32x512 is added in another order. Uses AVX-512 F
// only. Written by hand; Go declarations in kernels512_amd64.go.

#include "textflag.h"

// TAILMASK sets K1 to the low n bits (n in CX, 0 ≤ n < 16), using AX.
#define TAILMASK \
	MOVL  $1, AX;  \
	SHLL  CX, AX;  \
	DECL  AX;      \
	KMOVW AX, K1

// func addReluF32x512(d, x, b *float32, n int)
// d = max(x + b, 0) elementwise, zero as the first operand of VMAXPS so
// that a NaN or −0 sum passes through.
TEXT ·addReluF32x512(SB), NOSPLIT, $0-32
	MOVQ   d+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   n+24(FP), CX
	VPXORD Z15, Z15, Z15

ar32:
	CMPQ    CX, $32
	JLT     ar16
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VMAXPS  Z0, Z15, Z0
	VMAXPS  Z1, Z15, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     ar32

ar16:
	CMPQ    CX, $16
	JLT     artail
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z0
	VMAXPS  Z0, Z15, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX

artail:
	TESTQ     CX, CX
	JEQ       ardone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMAXPS    Z0, Z15, Z0
	VMOVUPS   Z0, K1, (DI)

ardone:
	VZEROUPPER
	RET

// func addReluScalarF32x512(d, x *float32, s float32, n int)
// d = max(s + x, 0) elementwise. Every sum is s + x, as in the vector
// loops of addReluScalarF32; its scalar tail adds x + s, which differs only
// in which NaN comes out when both s and x are NaN.
TEXT ·addReluScalarF32x512(SB), NOSPLIT, $0-32
	MOVQ         d+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS s+16(FP), Z14
	MOVQ         n+24(FP), CX
	VPXORD       Z15, Z15, Z15

as32:
	CMPQ    CX, $32
	JLT     as16
	VADDPS  (SI), Z14, Z0
	VADDPS  64(SI), Z14, Z1
	VMAXPS  Z0, Z15, Z0
	VMAXPS  Z1, Z15, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     as32

as16:
	CMPQ    CX, $16
	JLT     astail
	VADDPS  (SI), Z14, Z0
	VMAXPS  Z0, Z15, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX

astail:
	TESTQ     CX, CX
	JEQ       asdone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z0
	VADDPS    Z0, Z14, Z0
	VMAXPS    Z0, Z15, Z0
	VMOVUPS   Z0, K1, (DI)

asdone:
	VZEROUPPER
	RET

// RGSMASK computes 16 values of d into Z0 from y in Z1: gr where 0 < y
// (the mask K2), else +0.
#define RGSMASK \
	VCMPPS    $0x11, Z1, Z15, K2; \
	VMOVUPS.Z (DX), K2, Z0

// RGSADD adds the float64 values of Z0 into the accumulators Z10, Z11.
#define RGSADD \
	VCVTPS2PD     Y0, Z2;       \
	VEXTRACTF64X4 $1, Z0, Y3;   \
	VCVTPS2PD     Y3, Z3;       \
	VADDPD        Z2, Z10, Z10; \
	VADDPD        Z3, Z11, Z11

// func reluGradSumF32x512(d, y, gr *float32, n int) float64
// d = gr where 0 < y, else 0 (an ordered compare: a NaN y gives 0), and
// returns the float64 sum of d. The sum is in two 8-lane accumulators,
// folded at the end, where reluGradSumF32 has two 4-lane ones and a scalar
// tail: the order differs, so the two agree to within the rounding of
// float64 sums, |error| ≤ (n+16)·2⁻⁵³·Σ|d| (kernels512_test.go).
TEXT ·reluGradSumF32x512(SB), NOSPLIT, $0-40
	MOVQ   d+0(FP), DI
	MOVQ   y+8(FP), SI
	MOVQ   gr+16(FP), DX
	MOVQ   n+24(FP), CX
	VPXORD Z15, Z15, Z15
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11

rs16:
	CMPQ    CX, $16
	JLT     rstail
	VMOVUPS (SI), Z1
	RGSMASK
	VMOVUPS Z0, (DI)
	RGSADD
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     rs16

rstail:
	TESTQ     CX, CX
	JEQ       rsfold
	TAILMASK
	VMOVUPS.Z (SI), K1, Z1 // 0 past n: not above 0, so d's lanes are +0
	RGSMASK
	VMOVUPS   Z0, K1, (DI)
	RGSADD

rsfold:
	VADDPD        Z11, Z10, Z10
	VEXTRACTF64X4 $1, Z10, Y11
	VADDPD        Y11, Y10, Y10
	VEXTRACTF128  $1, Y10, X11
	VADDPD        X11, X10, X10
	VHADDPD       X10, X10, X10
	VMOVSD        X10, ret+32(FP)
	VZEROUPPER
	RET
