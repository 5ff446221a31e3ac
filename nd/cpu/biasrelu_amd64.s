// AVX2 kernels of the fused bias + ReLU (biasrelu.go). Written by hand; Go
// declarations in biasrelu_amd64.go. The maximum with zero is VMAXPS with
// zero as the first operand, so a NaN or −0 sum passes through as in
// reluF32.

#include "textflag.h"

// func addReluF32(d, x, b *float32, n int)
// d = max(x + b, 0) elementwise.
TEXT ·addReluF32(SB), NOSPLIT, $0-32
	MOVQ   d+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   n+24(FP), CX
	VXORPS Y15, Y15, Y15

ar8:
	CMPQ    CX, $8
	JLT     artail
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMAXPS  Y0, Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     ar8

artail:
	TESTQ  CX, CX
	JEQ    ardone
	VMOVSS (SI), X0
	VADDSS (DX), X0, X0
	VMAXSS X0, X15, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DX
	ADDQ   $4, DI
	DECQ   CX
	JMP    artail

ardone:
	VZEROUPPER
	RET

// func addReluScalarF32(d, x *float32, s float32, n int)
// d = max(x + s, 0) elementwise.
TEXT ·addReluScalarF32(SB), NOSPLIT, $0-32
	MOVQ         d+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS s+16(FP), Y14
	MOVQ         n+24(FP), CX
	VXORPS       Y15, Y15, Y15

as16:
	CMPQ    CX, $16
	JLT     as8
	VADDPS  (SI), Y14, Y0
	VADDPS  32(SI), Y14, Y1
	VMAXPS  Y0, Y15, Y0
	VMAXPS  Y1, Y15, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     as16

as8:
	CMPQ    CX, $8
	JLT     astail
	VADDPS  (SI), Y14, Y0
	VMAXPS  Y0, Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX

astail:
	TESTQ  CX, CX
	JEQ    asdone
	VMOVSS (SI), X0
	VADDSS X14, X0, X0
	VMAXSS X0, X15, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DI
	DECQ   CX
	JMP    astail

asdone:
	VZEROUPPER
	RET

// func reluGradSumF32(d, y, gr *float32, n int) float64
// d = gr where 0 < y, else 0 (an ordered compare: a NaN y gives 0), and
// returns the float64 sum of d.
TEXT ·reluGradSumF32(SB), NOSPLIT, $0-40
	MOVQ   d+0(FP), DI
	MOVQ   y+8(FP), SI
	MOVQ   gr+16(FP), DX
	MOVQ   n+24(FP), CX
	VXORPS Y15, Y15, Y15
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11

rs8:
	CMPQ         CX, $8
	JLT          rsfold
	VCMPPS       $0x11, (SI), Y15, Y1
	VANDPS       (DX), Y1, Y0
	VMOVUPS      Y0, (DI)
	VCVTPS2PD    X0, Y2
	VEXTRACTF128 $1, Y0, X3
	VCVTPS2PD    X3, Y3
	VADDPD       Y2, Y10, Y10
	VADDPD       Y3, Y11, Y11
	ADDQ         $32, SI
	ADDQ         $32, DX
	ADDQ         $32, DI
	SUBQ         $8, CX
	JMP          rs8

rsfold:
	VADDPD       Y11, Y10, Y10
	VEXTRACTF128 $1, Y10, X11
	VADDPD       X11, X10, X10
	VHADDPD      X10, X10, X10

rstail:
	TESTQ     CX, CX
	JEQ       rsdone
	VMOVSS    (SI), X1
	VCMPSS    $0x11, X1, X15, X1
	VMOVSS    (DX), X0
	VANDPS    X1, X0, X0
	VMOVSS    X0, (DI)
	VCVTSS2SD X0, X0, X0
	VADDSD    X0, X10, X10
	ADDQ      $4, SI
	ADDQ      $4, DX
	ADDQ      $4, DI
	DECQ      CX
	JMP       rstail

rsdone:
	VMOVSD X10, ret+32(FP)
	VZEROUPPER
	RET
